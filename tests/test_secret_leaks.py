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
