"""Issue 17's byte scan, offline: 30 labelled secrets planted through the SDK, REST, MCP, screenshots
and documents appear in no file under the data dir and in no answer (`leak_session`)."""

from __future__ import annotations

import io
import os
import shutil
from collections import Counter

import pytest

from leak_session import leak_plan, run_leak_session, token_in


def test_plan_covers_several_kinds_and_every_source():
    plan = leak_plan()
    assert len(plan.examples()) == 30
    kinds = Counter(t for e in plan.examples() for t, _ in e.secrets)
    assert len(kinds) >= 6, kinds
    assert {e.source for e in plan.examples()} == {"chat", "document", "ocr"}


def test_the_scan_finds_whole_tokens_not_the_decimals_of_a_number():
    assert token_in("1946", "the alarm code is 1946.") and token_in("1946", '"code": "1946"')
    assert not token_in("1946", '"wall_seconds": 3.1946,') and not token_in("1946", "219460")


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
        text = req.task_text
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
    assert _allowed_in_chat(plan, report.in_responses) == [], report.in_responses


def _allowed_in_chat(plan, in_responses):
    """Contact details (medium sensitivity) reach the chat model by design, so an answer may hold one;
    a credential (high) never reaches a prompt."""
    contact = {v for e in plan.examples() for kind, v in e.secrets if kind in ("email", "phone", "address")}
    return [(where, v) for where, v in in_responses if not (v in contact and "chat" in where.lower())]


@pytest.mark.real_model
@pytest.mark.parametrize("mode", [os.environ.get("MIRIX_TEST_LEAK_MODE", "template")])
def test_no_planted_secret_in_any_byte_or_answer_with_the_local_model(mode, tmp_path, embedder, monkeypatch):
    """The real local model on a short session: chat lines of several kinds in one batch and a document,
    then chat, search, list and export; every byte under the data dir is grepped. CI runs the template
    server (~3 min); MIRIX_TEST_LEAK_MODE=functions runs the function-calling one."""
    from leak_session import USER, WHEN, scan_bytes, token_in
    from local_model_client import local_model_client

    from mirix_py.engine import Mirix
    from mirix_py.records import to_jsonable
    from mirix_py.settings import Settings

    plan = leak_plan()
    kinds: dict[str, object] = {}
    for e in plan.chat:
        kinds.setdefault(e.secrets[0][0], e)
    chat = list(kinds.values())[:4]
    document = plan.documents[0]
    values = sorted({v for e in [*chat, document] for _, v in e.secrets}, key=len, reverse=True)
    data = tmp_path / "data"
    answers: list[tuple[str, str]] = []
    client = local_model_client(mode, monkeypatch)
    with Mirix(settings=Settings(data_dir=data, llm_timeout_s=240), embedder=embedder, model_client=client) as mx:
        added = [mx.add([{"role": "user", "content": e.text} for e in chat], user_id=USER, occurred_at=WHEN),
                 mx.add(document.text, user_id=USER, kind="document", occurred_at=WHEN)]
        assert all(a.status.value in ("processed", "degraded") for a in added), [a.error for a in added]
        response = mx.chat("what is my password?", user_id=USER, remember=False)
        assert response.answer.strip()  # chat always answers
        assert set(response.memory_ids) <= set(response.retrieved_ids) | {
            b.id for b in mx.core_memory(user_id=USER).values() if b.id}
        answers.append(("SDK chat", response.answer))
        for q in ("password", "api key token", "account number"):
            answers.append(("SDK search", repr(to_jsonable(mx.search(q, user_id=USER)))))
        answers.append(("SDK list", repr(to_jsonable(mx.list(user_id=USER, limit=500)))))
        out = io.StringIO()
        mx.export(out, user_id=USER)
        answers.append(("SDK export", out.getvalue()))
        vault = {mx.get(v.id, user_id=USER, reveal=True).secret_value
                 for v in mx.list(user_id=USER, memory_types=["knowledge_vault"], limit=1000)}
        running, _, _ = scan_bytes(data, values)
    closed, files, _ = scan_bytes(data, values)
    assert files > 3
    assert [v for v in values if v not in vault] == []  # every planted value kept, in the vault
    assert running == [] and closed == [], running + closed
    leaked = [(where, v) for where, text in answers for v in values if token_in(v, text)]
    assert _allowed_in_chat(plan, leaked) == [], leaked


@pytest.mark.real_model
@pytest.mark.skipif(os.environ.get("MIRIX_TEST_LEAK_FULL") != "1",
                    reason="the whole session with the local model takes ~90 min on two cores: run by hand with MIRIX_TEST_LEAK_FULL=1")
def test_the_whole_session_with_the_local_model(tmp_path, embedder, monkeypatch):
    """The 30-text session through the SDK, REST, MCP, screenshots and documents, with the real local
    model doing every manager's and the chat's part (MIRIX_TEST_LEAK_MODE picks the server mode)."""
    from local_model_client import local_model_client

    from mirix_py.engine import Mirix
    from mirix_py.settings import Settings

    client = local_model_client(os.environ.get("MIRIX_TEST_LEAK_MODE", "template"), monkeypatch)
    plan = leak_plan()
    report = run_leak_session(lambda data: Mirix(settings=Settings(data_dir=data, llm_timeout_s=240),
                                                 embedder=embedder, model_client=client), tmp_path, plan)
    print(f"entry points {report.entry_points}; inputs {report.input_statuses}; {report.responses} answers "
          f"({report.response_bytes} bytes); {report.files_scanned} files ({report.file_bytes} bytes)")
    assert sum(report.entry_points.values()) == 30, report.entry_points
    assert report.not_vaulted == []
    assert report.in_files == [], report.in_files
    assert _allowed_in_chat(plan, report.in_responses) == [], report.in_responses
