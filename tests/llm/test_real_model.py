"""Short sessions against a real local model (Qwen2.5-Coder-0.5B on llama-cpp-python's server): the
function-calling server in a short session, the template server in the benchmark's tiny run. `scripts/test.sh` provisions and starts the servers (`scripts/local_model.sh`);
without them these tests are skipped. They assert the properties the engine keeps whatever the
model writes, not wording: every input searchable with its id, no invented vault value, no
completion past its bound, chat always answering, a hung call bounded."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest
from local_model_client import MODES, local_model_client

from mirix_py.agents.definitions import load_definitions
from mirix_py.engine import Mirix
from mirix_py.llm.metering import Meter, MeteredClient
from mirix_py.records import KnowledgeVaultMemory
from mirix_py.settings import Settings

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
MESSAGES = [
    {"role": "user", "name": "Caroline", "id": "D1:1", "content": "Hey Mel! I went to a LGBTQ support group yesterday."},
    {"role": "user", "name": "Melanie", "id": "D1:2", "content": "Wow Caroline! I painted a sunrise at the lake last week."},
]


@pytest.mark.real_model
@pytest.mark.parametrize("mode", ["functions"])
def test_a_short_session_keeps_every_input_whatever_the_model_writes(mode, tmp_path, embedder, monkeypatch):
    """The function-calling server. The template server's batch is held to the same properties by the
    tiny benchmark below (every turn in a memory, found by its id and by its own words, no invented
    vault value, completions within bounds) and its chat by the local-model leak test
    (tests/test_secret_leaks.py: an answer, citing only what it was shown)."""
    calls = Meter()
    client = MeteredClient(local_model_client(mode, monkeypatch), calls, "server")
    with Mirix(settings=Settings(data_dir=tmp_path / mode, llm_timeout_s=240), embedder=embedder,
               model_client=client) as mx:
        result = mx.add(MESSAGES, user_id="caroline", occurred_at=WHEN)
        assert result.status.value in ("processed", "degraded"), result.error
        assert (result.status.value == "degraded") == bool(result.error)
        memories = mx.list(user_id="caroline", limit=1000)
        cited = {s for m in memories for s in m.source_ids}
        assert {"D1:1", "D1:2"} <= cited, "a message is in no memory"
        for message, words in ((MESSAGES[0], "support group"), (MESSAGES[1], "sunrise lake")):
            hits = mx.search(words, user_id="caroline")
            assert any(message["id"] in h.memory.source_ids for h in hits), message["id"]
        said = " ".join(m["content"] for m in MESSAGES)
        for memory in mx.list(user_id="caroline", memory_types=["knowledge_vault"]):
            secret = mx.get(memory.id, user_id="caroline", reveal=True)
            assert isinstance(secret, KnowledgeVaultMemory) and secret.secret_value in said
        bound = max(d.model.get("max_tokens", 0) for d in load_definitions().values())
        assert calls.calls and all(c.completion_tokens <= bound for c in calls.calls)

        response = mx.chat("What did Melanie paint?", user_id="caroline", remember=False)
        assert response.answer.strip()
        assert set(response.memory_ids) <= set(response.retrieved_ids) | {
            b.id for b in mx.core_memory(user_id="caroline").values() if b.id}


@pytest.mark.real_model
def test_a_call_past_its_timeout_degrades_instead_of_hanging(tmp_path, embedder, monkeypatch):
    client = local_model_client("template", monkeypatch)
    with Mirix(settings=Settings(data_dir=tmp_path / "t", llm_timeout_s=0.05), embedder=embedder,
               model_client=client) as mx:
        result = mx.add(MESSAGES, user_id="caroline", occurred_at=WHEN)
        assert result.status.value == "degraded" and "timed out" in result.error
        assert {"D1:1", "D1:2"} <= {s for m in mx.list(user_id="caroline") for s in m.source_ids}


@pytest.mark.real_model
def test_the_local_model_benchmark_runs_at_tiny_size(tmp_path, monkeypatch):
    """`benchmarks/local_model.py` end to end on one batch of the mini LoCoMo fixture."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    url = os.environ.get(MODES["template"])
    if not url:
        pytest.skip("the template server is not running: run through scripts/test.sh")
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "bench.json"
    home = os.environ.get("MIRIX_MODEL_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
        / "mirix" / "local-model"
    log = Path(home) / "run" / "template.log"  # where scripts/local_model.sh keeps the server's log
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "local_model.py"),
                          "--data", str(root / "tests" / "fixtures" / "locomo_mini.json"), "--mode", "template",
                          "--url", url, "--batches", "1", "--batch-size", "2", "--timeout", "240",
                          *(["--server-log", str(log)] if log.exists() else []),
                          "--out", str(out)], capture_output=True, text=True, timeout=900, cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    summary = result["llm"]["summary"]
    assert summary["batches"] == 1 and summary["processed"] + summary["degraded"] == 1
    assert summary["turns_searchable_with_id"] == f"{summary['turns']}/{summary['turns']}"
    assert summary["turns_found_by_first_six_words"] == f"{summary['turns']}/{summary['turns']}"
    assert summary["invented_secrets"] == 0 and summary["max_completion_tokens"] <= summary["largest_bound"]
    if log.exists():  # the server read the prompts (another test may share the server: no exact count)
        assert summary["server"]["calls"] >= 1 and summary["server"]["prompt_tokens_read"] > 0
    # both stores scored on the same questions
    assert result["scores"]["llm"]["questions"] == result["scores"]["offline"]["questions"]
    # and compared question by question: the mean difference inside its interval
    f1 = result["paired"]["scores"]["f1"]
    assert f1["questions"] == result["scores"]["llm"]["questions"]
    assert f1["better"] + f1["worse"] + f1["same"] == f1["questions"] and f1["low"] <= f1["mean"] <= f1["high"]
    assert "LLM store minus offline store, f1:" in run.stdout
