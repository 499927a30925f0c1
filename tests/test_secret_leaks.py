"""Issue 17's byte scan, offline: 30 labelled secrets planted through the SDK, REST, MCP, screenshots
and documents appear in no file under the data dir and in no answer (`leak_session`)."""

from __future__ import annotations

import os
import shutil
from collections import Counter

import pytest

from leak_session import leak_plan, run_leak_session


def test_plan_covers_several_kinds_and_every_source():
    plan = leak_plan()
    assert len(plan.examples()) == 30
    kinds = Counter(t for e in plan.examples() for t, _ in e.secrets)
    assert len(kinds) >= 6, kinds
    assert {e.source for e in plan.examples()} == {"chat", "document", "ocr"}


def test_no_planted_secret_in_any_byte_or_answer_offline(tmp_path, embedder):
    if shutil.which("tesseract") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tesseract is not installed in CI")
        pytest.skip("tesseract not installed")
    from mirix_py.engine import Mirix

    report = run_leak_session(lambda data: Mirix(data, embedder=embedder), tmp_path)
    assert sum(report.entry_points.values()) == 30, report.entry_points
    assert report.not_vaulted == []  # every secret was kept, in the vault
    assert report.files_scanned > 5 and report.responses > 100
    assert report.in_files == [], report.in_files
    assert report.in_responses == [], report.in_responses


def test_no_planted_secret_in_any_byte_or_answer_with_a_model_that_copies_its_prompts(tmp_path, embedder):
    """LLM mode, worst case: a model that writes its whole prompt into episodes and semantic memory and
    answers chat with its prompt. What it was shown already held placeholders, so nothing leaks."""
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract not installed")
    from mirix_py.engine import Mirix
    from mirix_py.llm.scripted import ScriptedChatCompletionClient

    def script(req):
        text = req.last_text
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "semantic"]})]
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": text[:300], "details": text[:3000]})]
        if req.agent == "semantic_memory_manager":
            return [("insert_semantic", {"name": "Notes", "summary": text[:300], "details": text[:3000]})]
        if "tool" in req.system and req.tool_names:
            return [("nothing_to_record", {})] if "nothing_to_record" in req.tool_names else text[:2000]
        return (req.system + "\n" + text)[:4000]  # chat: the prompt, memories included, as the answer

    plan = leak_plan()
    report = run_leak_session(lambda data: Mirix(data, embedder=embedder,
                                                 model_client=ScriptedChatCompletionClient(script)), tmp_path, plan)
    assert sum(report.entry_points.values()) == 30, report.entry_points
    assert report.not_vaulted == []
    assert report.in_files == [], report.in_files
    # contact details (medium sensitivity) are given to the chat model by design, so a model can answer
    # "what is my email?"; a credential (high) never reaches a prompt, so no answer can hold one
    contact = {v for e in plan.examples() for kind, v in e.secrets if kind in ("email", "phone", "address")}
    leaked = [(where, v) for where, v in report.in_responses if not (v in contact and "chat" in where.lower())]
    assert leaked == [], leaked
