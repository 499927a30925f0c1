"""`mirix eval locomo` end to end on a small LoCoMo-format file written for these tests.

tests/fixtures/locomo_mini.json: two conversations, 8 turns. Scored (categories 1-4 with evidence):
six questions; one question has no evidence (not scored), one is adversarial (category 5), one names
a turn that does not exist (D1:9: recall 0 whatever is retrieved), and one evidence list is malformed
("D:2:2" repaired, "D" dropped).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from PIL import Image
from pydantic import ValidationError
from typer.testing import CliRunner

from mirix_py.errors import MirixError
from mirix_py.eval import locomo_eval
from mirix_py.eval.locomo_eval import Hit, LocomoEvalConfig, context_scores, kept_hits, run_locomo, summarize
from mirix_py.eval.locomo import parse_conversation
from mirix_py.eval.report import write_report
from mirix_py.llm.scripted import ScriptedChatCompletionClient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"
GOLD = {q["question"]: q.get("answer", "") for c in json.loads(FIXTURE.read_text()) for q in c["qa"]}


def config(tmp_path: Path, **kw) -> LocomoEvalConfig:
    return LocomoEvalConfig(data=FIXTURE, cache_dir=tmp_path / "cache", **kw)


# ------------------------------------------------------------------ pure parts


def test_kept_hits_and_context_scores_hand_computed():
    conv = parse_conversation(json.loads(FIXTURE.read_text())[0])
    q = conv.questions[1]  # evidence D1:2, D2:1; gold "a sunrise, to fetch"
    hits = [Hit(id="a", score=3, text="Bo painted a sunrise", source_ids=["D1:2"]),  # 4 words
            Hit(id="b", score=2, text="Rex is a dog that learned to fetch", source_ids=["D2:1"]),  # 8 words
            Hit(id="c", score=1, text="x", source_ids=["D2:3"])]
    assert [h.id for h in kept_hits(hits, 11)] == ["a"]  # b does not fit, so c is not reached
    s = context_scores(q, hits, 12)
    # both evidence turns kept; gold content stems: sunris, fetch (to is a stopword) -> both present
    assert s == {"evidence_recall": 1.0, "answer_token_recall": 1.0, "words": 12, "kept": 2}
    s = context_scores(q, hits, 4)
    assert s["evidence_recall"] == 0.5 and s["answer_token_recall"] == 0.5 and s["kept"] == 1


def test_a_day_already_stated_costs_a_later_hit_only_its_clock():
    conv = parse_conversation(json.loads(FIXTURE.read_text())[0])
    q = conv.questions[1]  # evidence D1:2, D2:1
    hits = [Hit(id="a", score=3, text="[8 May 2023, 13:56] Bo: painted a sunrise", source_ids=["D1:2"]),  # 8 words
            Hit(id="b", score=2, text="[8 May 2023, 14:02] Bo: Rex learned to fetch", source_ids=["D2:1"])]
    # with its own day b would take 9 words (17 in all); under a's day it takes its clock and 5 words
    assert [h.id for h in kept_hits(hits, 14)] == ["a", "b"] and [h.id for h in kept_hits(hits, 13)] == ["a"]
    s = context_scores(q, hits, 14)
    assert s["evidence_recall"] == 1.0 and s["words"] == 14 and s["kept"] == 2


def test_model_usage_of_several_stores_is_summed_per_kind():
    a = {"ingest": {"runs": 2, "llm_calls": 8, "prompt_tokens": 100, "completion_tokens": 10, "wall_seconds": 1.25}}
    b = {"ingest": {"runs": 1, "llm_calls": 4, "prompt_tokens": 50, "completion_tokens": 5, "wall_seconds": 0.5},
         "chat": {"runs": 1, "llm_calls": 2, "prompt_tokens": 30, "completion_tokens": 3, "wall_seconds": 0.2}}
    assert locomo_eval.summed_usage([a, b]) == {
        "ingest": {"runs": 3, "llm_calls": 12, "prompt_tokens": 150, "completion_tokens": 15, "wall_seconds": 1.75},
        "chat": {"runs": 1, "llm_calls": 2, "prompt_tokens": 30, "completion_tokens": 3, "wall_seconds": 0.2}}
    assert locomo_eval.summed_usage([]) == {}


def test_summarize_means_per_category_and_overall():
    rows = [{"category": 1, "m": 1.0}, {"category": 1, "m": 0.0}, {"category": 4, "m": 0.5},
            {"category": 4, "m": math.nan}, {"category": 5, "m": 1.0}]
    s = summarize(rows, ["m"])
    assert s["by_category"]["1"] == {"n": 2, "m": 0.5, "n_m": 2}
    assert s["by_category"]["4"]["m"] == 0.5 and s["by_category"]["4"]["n_m"] == 1  # NaN left out
    assert s["overall_1_4"]["n"] == 4 and s["overall_1_4"]["m"] == pytest.approx(0.5)  # (1 + 0 + .5) / 3
    assert s["by_category"]["5"]["m"] == 1.0


# ------------------------------------------------------------------ offline run


@pytest.fixture(scope="module")
def offline_report(tmp_path_factory, embedder):
    tmp = tmp_path_factory.mktemp("locomo")
    return run_locomo(config(tmp, budget_words=750, curve_budgets=[1, 20, 750]), embedder=embedder), tmp


def test_offline_run_counts_and_evidence(offline_report):
    report, _ = offline_report
    assert report["systems"] == ["engine", "raw BM25", "raw MiniLM", "raw RRF", "raw RRF k=10"]
    assert report["data"]["scored_questions_by_category"] == {"1": 1, "2": 1, "3": 1, "4": 3, "5": 1}
    ev = report["data"]["evidence"]
    assert ev["questions_without_evidence"] == 1 and any("D:2:2" in m for m in ev["malformed"])
    assert any("D1:9" in u for u in ev["unknown"])
    assert report["engine"]["cache_reused"] is False and report["engine"]["sessions"] == 3
    assert report["engine"]["turns"] == 8


def test_offline_run_baselines_recall_everything_that_exists_when_all_fits(offline_report):
    report, _ = offline_report
    # 750 words hold both conversations whole: every evidence turn that exists is kept, and D1:9 never
    # is: (1 + 1 + 1 + 1 + 1 + 0) / 6
    for name in ("raw BM25", "raw MiniLM", "raw RRF", "raw RRF k=10"):
        assert report["summary"][name]["overall_1_4"]["evidence_recall"] == pytest.approx(5 / 6)
    # one word holds no turn: nothing is kept, recall 0
    for name in report["systems"]:
        assert report["curve"][name]["1"]["evidence_recall"] == 0.0


def test_offline_run_reports_each_conversation(offline_report):
    report, _ = offline_report
    per = report["per_conversation"]
    assert set(per) == set(report["systems"])
    for name, convs in per.items():
        assert list(convs) == ["mini-1", "mini-2"]
        # the per-conversation means weigh up to the overall one
        total = sum(b["n"] for b in convs.values())
        assert total == report["summary"][name]["overall_1_4"]["n"] == 6
        weighted = sum(b["evidence_recall"] * b["n"] for b in convs.values()) / total
        assert weighted == pytest.approx(report["summary"][name]["overall_1_4"]["evidence_recall"])


def test_offline_run_keeps_every_questions_hits_and_scores(offline_report):
    report, _ = offline_report
    rows = {r["id"]: r for r in report["questions"]}
    assert len(rows) == 7  # 6 scored + 1 adversarial
    row = rows["mini-1#2"]  # "What did Ann bake for her sister?"
    engine = row["systems"]["engine"]
    assert engine["ids"] and all(re.fullmatch(r"[a-z]+_[0-9a-f]{32}", i) for i in engine["ids"])
    assert len(engine["scores"]) == len(engine["ids"]) == engine["kept"]
    assert all(i in report["memory_sources"] for i in engine["ids"])  # each kept memory's source ids, once
    assert any("D2:2" in report["memory_sources"][i] for i in engine["ids"])
    assert engine["evidence_recall"] == 1.0 and "search_ms" in engine
    assert engine["answer_token_recall"] == 1.0  # "chocolate cake" is in the caption the engine was given
    raw = row["systems"]["raw BM25"]
    assert raw["ids"][0] == "D2:2" and raw["scores"] == sorted(raw["scores"], reverse=True)
    assert rows["mini-1#5"]["category"] == 5 and math.isnan(rows["mini-1#5"]["systems"]["engine"]["answer_token_recall"])
    assert report["answers"] == {}


def test_report_files_are_strict_json_markdown_and_png(offline_report, tmp_path):
    report, _ = offline_report
    paths = write_report(report, tmp_path / "out")
    data = json.loads(paths["json"].read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert data["questions"][0]["systems"]["engine"]["ids"]
    md = paths["markdown"].read_text()
    assert "| engine |" in md and "| raw RRF |" in md and "| questions | 1 | 1 | 1 | 3 | 6 | 1 |" in md
    assert '"budget_words": 750' in md  # the configuration is in the report
    # and which layout it measured
    assert "- Store: a store per conversation, one user each; {'database': 'sqlite', 'vectors': 'chroma-embedded'" in md
    for name in ("recall_vs_budget", "per_category"):
        with Image.open(paths[name]) as img:
            assert img.format == "PNG" and img.width > 300


def test_a_second_run_reuses_the_ingestion(offline_report, embedder, monkeypatch):
    _, tmp = offline_report

    def no_ingest(*a, **k):
        raise AssertionError("re-ingested")

    monkeypatch.setattr(locomo_eval, "ingest_conversation", no_ingest)
    again = run_locomo(config(tmp, budget_words=20, curve_budgets=[20]), embedder=embedder)
    assert again["engine"]["cache_reused"] is True and again["engine"]["sessions"] == 3


def test_a_reused_ingestion_whose_store_changed_is_refused(tmp_path, embedder):
    from mirix_py.engine import Mirix

    first = run_locomo(config(tmp_path, budget_words=750), embedder=embedder)
    with Mirix(first["engine"]["data_dirs"]["mini-1"], embedder=embedder) as mx:  # someone deletes a memory in between
        user = parse_conversation(json.loads(FIXTURE.read_text())[0]).user_id
        mx.delete(mx.list(user_id=user, limit=1)[0].id, user_id=user)
    with pytest.raises(RuntimeError, match="changed since"):
        run_locomo(config(tmp_path, budget_words=750), embedder=embedder)
    again = run_locomo(config(tmp_path, budget_words=750, fresh=True), embedder=embedder)
    assert again["engine"]["cache_reused"] is False
    assert again["summary"]["engine"]["overall_1_4"]["evidence_recall"] == first["summary"]["engine"]["overall_1_4"]["evidence_recall"]


def test_each_conversation_is_a_store_of_its_own_by_default(offline_report):
    report, _ = offline_report
    engine = report["engine"]
    assert engine["store"] == "per_conversation" and set(engine["data_dirs"]) == {"mini-1", "mini-2"}
    assert len(set(engine["data_dirs"].values())) == 2
    assert engine["memories_by_user"] == {"locomo:mini-1": engine["memories_by_user"]["locomo:mini-1"],
                                          "locomo:mini-2": engine["memories_by_user"]["locomo:mini-2"]}
    assert sum(engine["memories"].values()) == sum(engine["memories_by_user"].values()) > 0


def test_a_conversation_scores_the_same_with_or_without_the_others(offline_report, embedder):
    """Its store holds it alone, so the questions of the first conversation are answered from the
    same hits whether the run has the second conversation or not (a shared store's full-text
    statistics would count both)."""
    report, tmp = offline_report
    alone = run_locomo(config(tmp, budget_words=750, curve_budgets=[1, 20, 750], conversations=1,
                              baselines=False), embedder=embedder)
    assert alone["engine"]["cache_reused"] is True  # the first conversation's own store, from the cache
    both = {r["id"]: r["systems"]["engine"] for r in report["questions"] if r["conversation"] == "mini-1"}
    assert {r["id"]: r["systems"]["engine"]["ids"] for r in alone["questions"]} == {k: v["ids"] for k, v in both.items()}


def test_a_shared_store_holds_every_conversation(tmp_path, embedder):
    from mirix_py.engine import Mirix

    report = run_locomo(config(tmp_path, budget_words=750, store="shared", baselines=False), embedder=embedder)
    assert report["engine"]["store"] == "shared"
    with Mirix(report["engine"]["data_dir"], embedder=embedder) as mx:
        assert {u for u in report["engine"]["memories_by_user"]} == {"locomo:mini-1", "locomo:mini-2"}
        assert all(sum(mx.store.count(user_id=u).values()) == n for u, n in report["engine"]["memories_by_user"].items())
    assert report["summary"]["engine"]["overall_1_4"]["n"] == 6


def test_the_cache_key_names_an_outside_store_without_its_password(tmp_path):
    from mirix_py.settings import Settings

    assert locomo_eval.store_outside(Settings(data_dir=tmp_path)) is None  # embedded: the data dir says it all
    outside = locomo_eval.store_outside(Settings(data_dir=tmp_path, database_url="postgresql+psycopg://me:s3cret@db/x",
                                                 vector_store="pgvector"))
    assert outside == {"database_url": "postgresql+psycopg://me:***@db/x", "chroma_url": None, "vector_store": "pgvector"}
    on_server = locomo_eval.store_outside(Settings(data_dir=tmp_path, chroma_url="http://me:s3cret@chroma:8000"))
    assert on_server is not None and on_server["chroma_url"] == "http://me:***@chroma:8000"


def test_a_run_on_a_database_does_not_reuse_an_embedded_ingestion(tmp_path, embedder, pg_schema_url, monkeypatch):
    """The cache key names where the memories live: the same data and settings on PostgreSQL ingest there
    instead of searching an empty database with the embedded run's marker (which scored 0)."""
    embedded = run_locomo(config(tmp_path, budget_words=750), embedder=embedder)
    monkeypatch.setenv("MIRIX_DATABASE_URL", pg_schema_url)
    on_postgres = run_locomo(config(tmp_path, budget_words=750), embedder=embedder)
    assert on_postgres["engine"]["cache_reused"] is False
    # both conversations' stores are in the one database: each counts its own user's memories
    assert on_postgres["engine"]["memories"] == embedded["engine"]["memories"]
    assert embedded["engine"]["layout"]["database"] == "sqlite" and on_postgres["engine"]["layout"]["database"] == "postgresql"
    assert on_postgres["summary"]["engine"]["overall_1_4"]["evidence_recall"] == embedded["summary"]["engine"]["overall_1_4"]["evidence_recall"] > 0
    assert on_postgres["engine"]["store"] == "shared"  # engines on one database share its key and vectors
    key = json.loads((Path(on_postgres["engine"]["data_dir"]) / "key.json").read_text())
    assert key["store"]["database_url"].startswith("postgresql")
    # that database, under another cache (another data dir: its own vault key, refused before any write)
    with pytest.raises(MirixError, match="vault key differs"):
        run_locomo(config(tmp_path / "other", budget_words=750), embedder=embedder)


def written_for(mx, users):
    """Each user's memories and logged inputs: what an ingestion writes."""
    from mirix_py.records import InputStatus

    return {u: (sum(mx.store.count(user_id=u).values()),
                sum(len(mx.inputs.by_status(s, user_id=u, limit=10_000)) for s in InputStatus)) for u in users}


def test_a_fresh_ingestion_into_a_database_holding_its_users_is_refused(tmp_path, embedder, pgvector_schema_url,
                                                                         monkeypatch):
    """`--fresh` on the database an earlier run ingested into (vault key and vectors shared, as engines
    on one database must): its users' memories are there already, and a second ingestion would mix with them."""
    from cryptography.fernet import Fernet

    from mirix_py.engine import Mirix

    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_VECTOR_STORE", "pgvector")
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())
    first = run_locomo(config(tmp_path, budget_words=750, baselines=False), embedder=embedder)
    users = ["locomo:mini-1", "locomo:mini-2"]
    with Mirix(first["engine"]["data_dir"], embedder=embedder) as mx:
        before = written_for(mx, users)
    assert all(memories and inputs for memories, inputs in before.values()), before
    refusal = ("the store already holds memories for ['locomo:mini-1', 'locomo:mini-2']: "
               "give a database that holds none of these conversations' users")
    with pytest.raises(RuntimeError, match=re.escape(refusal)):
        run_locomo(config(tmp_path, budget_words=750, baselines=False, fresh=True), embedder=embedder)
    with pytest.raises(RuntimeError, match=re.escape(refusal)):  # the refused ingestion was not kept as one done
        run_locomo(config(tmp_path, budget_words=750, baselines=False), embedder=embedder)
    with Mirix(first["engine"]["data_dir"], embedder=embedder) as mx:
        assert written_for(mx, users) == before


def test_a_refused_open_leaves_no_entry_that_refuses_the_next_run(tmp_path, embedder, pgvector_schema_url,
                                                                    monkeypatch):
    """A run without the database's vault key made a new entry whose own key could not open the database:
    refused, and its key then stayed in the entry, so every later run was refused as if starting over
    would delete a key the database needed."""
    from cryptography.fernet import Fernet

    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_VECTOR_STORE", "pgvector")
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())
    run_locomo(config(tmp_path, budget_words=750, baselines=False), embedder=embedder)
    monkeypatch.delenv("MIRIX_VAULT_KEY")
    for _ in range(2):
        with pytest.raises(Exception, match="vault key differs"):
            run_locomo(config(tmp_path, budget_words=750, baselines=False, fresh=True), embedder=embedder)


# ------------------------------------------------------------------ llm mode, scripted model


def answering_script(wrong: set[str]):
    """Topics, chat answers (gold unless the question is in `wrong`), baseline answers and a judge."""
    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["memory"], "start": None, "end": None})
        if req.agent in ("chat_agent", "answerer"):
            question = req.last_text.split("\n\nAnswer with a short phrase")[0].split("user: ")[-1].strip()
            gold = GOLD.get(question, "")
            if question in wrong or not gold or question.startswith("What did Bo say about Ann's cat"):
                return "Not mentioned in the conversation."
            return gold
        if req.agent == "judge":
            gold = re.search(r"Gold answer: (.*)", req.last_text).group(1)
            answer = re.search(r"Answer to grade: (.*)", req.last_text).group(1)
            return json.dumps({"reasoning": "-", "label": "CORRECT" if gold.lower() in answer.lower() else "WRONG"})
        raise AssertionError(f"unexpected agent {req.agent!r}")
    return script


def test_llm_mode_answers_scores_and_judges(tmp_path, embedder):
    wrong = {"When did Ann go to her first pottery class?"}
    client = ScriptedChatCompletionClient(answering_script(wrong))
    report = run_locomo(config(tmp_path, mode="llm", ingest_mode="offline", llm_model="scripted"),
                        embedder=embedder, model_client=client)
    answers = report["answers"]
    assert answers["readers"] == ["engine chat", "raw RRF", "full context"]
    chat = answers["summary"]["engine chat"]
    # six scored questions, one answered wrongly on purpose -> judge 5/6. F1: exact golds score 1, except
    # the open-domain one, scored against its first ";" alternative "Likely yes": P = 2/5, R = 1 -> 4/7
    assert chat["overall_1_4"]["judge_correct"] == pytest.approx(5 / 6)
    assert chat["overall_1_4"]["f1"] == pytest.approx((4 + 4 / 7) / 6)
    assert chat["by_category"]["5"]["f1"] == 1.0  # the adversarial question was declined
    assert chat["judge_invalid"] == 0 and chat["llm_calls_total"] >= 14  # topics + answer per question
    assert chat["latency_p50_s"] > 0 and chat["latency_p95_s"] >= chat["latency_p50_s"]
    full = answers["summary"]["full context"]
    assert full["overall_1_4"]["judge_correct"] == pytest.approx(5 / 6) and full["llm_calls_total"] == 7
    row = next(r for r in report["questions"] if r["id"] == "mini-2#0")
    assert row["answers"]["engine chat"]["answer"] == "violin" and row["answers"]["raw RRF"]["judge"] == "CORRECT"
    assert "context_words" in row["answers"]["full context"]
    judged = [r for r in client.requests if r.agent == "judge"]
    assert len(judged) == 6 * 3  # every scored question, for each of the three readers


# ------------------------------------------------------------------ bad input


def test_bad_configuration_is_rejected(tmp_path):
    with pytest.raises(ValidationError):
        config(tmp_path, mode="online")
    with pytest.raises(ValidationError):
        config(tmp_path, budget_words=0)
    with pytest.raises(ValidationError):
        config(tmp_path, conversations=0)
    with pytest.raises(ValidationError):
        config(tmp_path, store="per_user")


def test_llm_mode_without_a_model_fails_before_ingesting(tmp_path):
    with pytest.raises(ValueError, match="MIRIX_LLM_MODEL"):
        run_locomo(config(tmp_path, mode="llm"))
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("content", ["[]", "{not json", '[{"sample_id": "x"}]'])
def test_unusable_data_files_fail_clearly(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises((ValueError, KeyError)):
        run_locomo(LocomoEvalConfig(data=bad, cache_dir=tmp_path / "cache", baselines=False), embedder=None)
    assert not (tmp_path / "cache").exists()


# ------------------------------------------------------------------ the command


def test_cli_writes_the_report_and_rejects_bad_options(tmp_path, monkeypatch):
    from mirix_py.cli.commands import app

    monkeypatch.setenv("MIRIX_EMBEDDER", "none")  # BM25 only: the command, not the embedder, is under test
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--out", str(tmp_path / "out"),
                                 "--cache-dir", str(tmp_path / "cache"), "--budget-words", "50"])
    assert result.exit_code == 0, result.output
    assert "raw BM25" in result.output
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "locomo_eval.json", "locomo_eval.md", "recall_vs_budget.png", "per_category.png"}
    bad = runner.invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--mode", "online",
                              "--cache-dir", str(tmp_path / "cache2")])
    assert bad.exit_code == 2 and "mode" in bad.output
    shared = runner.invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--out", str(tmp_path / "shared"),
                                 "--cache-dir", str(tmp_path / "cache"), "--no-baselines", "--store", "shared"])
    assert shared.exit_code == 0, shared.output
    assert json.loads((tmp_path / "shared" / "locomo_eval.json").read_text())["engine"]["store"] == "shared"
    bad_store = runner.invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--store", "one",
                                    "--cache-dir", str(tmp_path / "cache3")])
    assert bad_store.exit_code == 2 and "store" in bad_store.output and not (tmp_path / "cache3").exists()
    missing = runner.invoke(app, ["eval", "locomo", "--data", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such file" in missing.output
