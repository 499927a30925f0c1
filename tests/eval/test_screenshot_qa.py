"""`mirix eval screenshots`: question generation, scoring rules, an end-to-end run, the cache, bad input."""

from __future__ import annotations

import json
import math

import pytest
import typer
from typer.testing import CliRunner

from mirix_py.eval import screenshot_qa as sq
from mirix_py.eval.screenshot_qa import ingestion
from mirix_py.eval.screenshot_qa import (
    FAMILIES, NOT_PRESENT, QAItem, ScreenshotQAConfig, abstention_holds, contains, first_mention,
    generate_questions, normalize, score_item,
)


def _manifest(seed: int = 7, days: int = 3):
    return sq.session(ScreenshotQAConfig(seed=seed, days=days))


# ------------------------------------------------------------------ question generation


def test_every_family_is_generated_on_a_three_day_session():
    _, _, manifest = _manifest(days=3)
    questions = generate_questions(manifest)
    assert {q.family for q in questions} == set(FAMILIES)
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert q.question.endswith("?") and q.answer
        if q.family == "abstention":
            assert q.answer == NOT_PRESENT and not q.parts and q.distractors
        else:
            assert q.parts and len(q.parts) == len(q.evidence) and all(q.evidence)


def test_golds_agree_with_the_manifest():
    synth, frames, manifest = _manifest(days=3)
    questions = {q.id: q for q in generate_questions(manifest)}
    files = {f["file"]: f for f in manifest["frames"]}
    for q in questions.values():
        # every gold part is drawn on at least one of its evidence frames
        for part, group in zip(q.parts, q.evidence):
            assert all(g in files for g in group)
            assert any(contains(" ".join(files[g]["lines"]), alt) for g in group for alt in part), (q.id, part)
        # abstention traps were on screen, the stranger never was
        for trap in q.distractors:
            assert any(contains(" ".join(f["lines"]), trap) for f in manifest["frames"]), (q.id, trap)
    world = synth.world
    lookup = [q for q in questions.values() if q.family == "lookup"]
    assert any(q.answer == world.project_desc for q in lookup)
    phone = synth.facts["mail-phone"].secret
    assert any(q.answer == phone for q in lookup)
    update = {q.question: q for q in questions.values() if q.family == "knowledge-update"}
    launch = next(q for text, q in update.items() if "launch date" in text)
    assert launch.parts == [["21 June"]] and launch.distractors == ["14 June"]  # moved a week on day 2
    dentist = next(q for text, q in update.items() if "dentist" in text)
    assert dentist.parts == [["16:30"]] and dentist.distractors == ["15:00"]
    articles = next(q for q in questions.values() if q.family == "counting" and "Wikipedia" in q.question)
    shown = {fid for f in frames for fid in f.facts if fid.startswith("web-")}
    assert articles.answer.startswith(f"{len(shown)} (")
    stranger = next(q for q in questions.values() if q.family == "abstention" and "phone" in q.question)
    name = stranger.question.removeprefix("What is ").split("'s")[0]
    assert not any(name in line for f in manifest["frames"] for line in f["lines"])


def test_questions_are_deterministic_by_seed():
    a = [q.as_dict() for q in generate_questions(_manifest(seed=3, days=2)[2])]
    b = [q.as_dict() for q in generate_questions(_manifest(seed=3, days=2)[2])]
    c = [q.as_dict() for q in generate_questions(_manifest(seed=4, days=2)[2])]
    assert a == b
    assert a != c


def test_a_one_day_session_has_no_update_questions():
    questions = generate_questions(_manifest(days=1)[2])
    families = {q.family for q in questions}
    assert "knowledge-update" not in families  # nothing has changed yet on day 0
    assert {"lookup", "time-localised", "counting", "abstention"} <= families


def test_a_fact_without_its_values_is_an_error_not_a_dropped_question():
    _, _, manifest = _manifest(days=1)
    facts = {**manifest["facts"], "mail-phone": {**manifest["facts"]["mail-phone"], "values": {}}}
    with pytest.raises(ValueError, match="'mail-phone' has no value 'phone'"):
        generate_questions({**manifest, "facts": facts})


def test_a_manifest_without_world_is_refused():
    _, _, manifest = _manifest(days=1)
    old = {k: v for k, v in manifest.items() if k != "world"}
    with pytest.raises(ValueError, match="world"):
        generate_questions(old)


# ------------------------------------------------------------------ scoring


def test_normalisation_and_containment():
    assert normalize("Launch date: Friday, 14 June!") == "launch date friday 14 june"
    assert normalize("ravi.tanaka@acme-analytics.com") == "ravi tanaka acme analytics com"
    assert contains("Launch date: Friday 14 June. Owner", "friday 14 JUNE")
    assert not contains("Launch date: Friday 114 June", "14 June")  # whole words only
    assert contains("call +1 415 555 0999 today", "+1 415 555 0999")
    assert contains("lena@laptop:~/aurora$ ./deploy.sh --env staging --project aurora",
                    "./deploy.sh --env staging --project aurora")
    assert not contains("anything", "")
    assert not contains("", "x")


def _item(**kw):
    base = dict(id="q", family="lookup", question="?", answer="a", parts=[["alpha beta"]], evidence=[["f1.png"]])
    base.update(kw)
    return QAItem(**base)


def test_score_item_hand_computed():
    item = _item(family="cross-app", parts=[["Omar Berg"], ["1:1 with Omar"], ["13:00"]],
                 evidence=[["doc.png"], ["cal.png"], ["cal.png"]])
    kept = [("Owner: Omar Berg.", ("in_1", "doc.png")), ("13:00 Design review", ("in_2", "other.png"))]
    sc = score_item(item, kept)
    assert sc.score == 0.0  # "1:1 with Omar" is missing
    assert sc.partial == pytest.approx(2 / 3)
    assert sc.evidence == pytest.approx(1 / 3)  # doc.png retrieved, cal.png not
    assert sc.words == 3 + 3 and sc.kept == 2
    kept.append(("13:00 1:1 with Omar", ("cal.png",)))
    sc = score_item(item, kept)
    assert (sc.score, sc.partial, sc.evidence) == (1.0, 1.0, 1.0)
    # an alternative satisfies its part
    alt = _item(parts=[["Vendor call with Mei Tanaka", "Vendor call"]])
    assert score_item(alt, [("10:00 Vendor call with", ())]).score == 1.0
    # no evidence groups: NaN
    assert math.isnan(score_item(_item(evidence=[[]]), [("alpha beta", ())]).evidence)


def test_first_mention_hand_computed():
    item = _item(family="knowledge-update", parts=[["21 June"]], distractors=["14 June"])
    assert first_mention(item, ["nothing here", "launch Friday 21 June", "was 14 June"]) == 1.0
    assert first_mention(item, ["launch 14 June", "launch Friday 21 June"]) == 0.0
    assert first_mention(item, ["moved from 14 June to 21 June"]) == 0.0  # both: not unambiguous
    assert first_mention(item, ["nothing"]) == 0.0
    assert first_mention(_item(), ["alpha beta"]) is None  # no distractors: not measured
    sc = score_item(item, [("launch 14 June", ()), ("launch 21 June", ())])
    assert sc.score == 1.0 and sc.first_mention == 0.0


def test_abstention_hand_computed():
    item = _item(family="abstention", answer=NOT_PRESENT, parts=[], evidence=[],
                 distractors=["+1 415 555 0999", "15:00"])
    assert abstention_holds(item, ["Dana's phone is unknown", "meeting at 16:30"])
    assert not abstention_holds(item, ["You can reach me at +1 (415) 555-0999"])  # punctuation does not hide it
    assert not abstention_holds(item, ["15:00 Dentist"])
    assert abstention_holds(item, ["115:00"])  # whole words
    sc = score_item(item, [("meeting at 16:30", ("f.png",))])
    assert (sc.score, sc.partial) == (1.0, 1.0) and math.isnan(sc.evidence) and sc.first_mention is None
    assert score_item(item, [("15:00 Dentist", ())]).score == 0.0
    assert score_item(item, []).score == 1.0  # an empty context holds


def test_keep_within_is_a_prefix_of_the_ranking():
    hits = [("a b c", ("1",), "m1"), ("d e f g", ("2",), "m2"), ("h", ("3",), "m3")]
    assert sq.keep_within(hits, 7) == hits[:2]
    assert sq.keep_within(hits, 6) == hits[:1]  # the second does not fit: stop there, even though "h" would
    assert sq.keep_within(hits, 2) == []


def test_baseline_index_ranks_by_bm25():
    index = sq.BaselineIndex([("the launch date is Friday", "a.png"), ("lunch at Sakura", "b.png"),
                              ("nothing", "c.png")])
    hits = index.hits("When is the launch date?")
    assert hits[0][1] == ("a.png",) and hits[0][2] == "frame:a.png"
    assert "c.png" not in {h[1][0] for h in hits}


def test_config_validation():
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        ScreenshotQAConfig(mode="fast").validate()
    with pytest.raises(ValueError, match="days must be"):
        ScreenshotQAConfig(days=0).validate()
    with pytest.raises(ValueError, match="budget"):
        ScreenshotQAConfig(budget_words=0).validate()
    with pytest.raises(ValueError, match="dwell"):
        ScreenshotQAConfig(dwell=(3, 2)).validate()


def test_the_engine_source_is_part_of_the_cache_key(tmp_path, monkeypatch):
    assert len(ingestion.engine_fingerprint()) == 12
    calls = []

    class Stop(Exception):
        pass

    def fake_write(frames, out, **kw):
        calls.append(out.parent.name)
        raise Stop

    monkeypatch.setattr("mirix_synth.screens.write_session", fake_write)
    for fp in ("aaaaaaaaaaaa", "bbbbbbbbbbbb"):
        monkeypatch.setattr(ingestion, "engine_fingerprint", lambda fp=fp: fp)
        with pytest.raises(Stop):
            sq.ingest_cached(ScreenshotQAConfig(days=1), tmp_path, embedder=None)
    assert calls[0].endswith("-aaaaaaaaaaaa") and calls[1].endswith("-bbbbbbbbbbbb")
    assert calls[0].rsplit("-", 1)[0] == calls[1].rsplit("-", 1)[0]


def test_llm_mode_needs_a_client_and_a_judge(tmp_path):
    with pytest.raises(ValueError, match="LLM mode needs"):
        sq.run_benchmark(ScreenshotQAConfig(mode="llm", days=1), tmp_path / "out", tmp_path / "cache")


# ------------------------------------------------------------------ end to end (Tesseract)

TINY = dict(seed=7, days=1, dwell=(1, 2), workers=1)


@pytest.fixture(scope="module", autouse=True)
def fixed_fingerprint():
    """Other work may change the engine's source while these tests run: pin the cache key's source hash."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ingestion, "engine_fingerprint", lambda: "testsource00")
        yield


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, embedder, fixed_fingerprint):
    pytest.importorskip("pytesseract")
    from mirix_py.ingest.ocr import check_tesseract

    try:
        check_tesseract()
    except Exception as exc:  # pragma: no cover - the machine has Tesseract
        pytest.skip(f"tesseract: {exc}")
    root = tmp_path_factory.mktemp("sqa")
    result = sq.run_benchmark(ScreenshotQAConfig(**TINY), root / "out", root / "cache", embedder=embedder)
    return root, result


def test_end_to_end_writes_the_three_files(tiny_run):
    root, result = tiny_run
    out = root / "out"
    data = json.loads((out / "screenshot_qa.json").read_text())
    assert data["config"]["seed"] == 7 and data["config"]["days"] == 1
    assert data["ingestion"]["reused"] is False
    assert data["questions"] and len(data["questions"]) == data["config"]["questions"]
    q = data["questions"][0]
    for key in ("family", "question", "gold", "evidence_frames"):
        assert key in q
    for system in ("engine", "baseline", "baseline_focus"):
        assert {"score", "retrieved_ids", "kept_ids", "kept_texts", "words"} <= set(q[system])
        assert q[system]["words"] <= 750
    # the focused baseline ranks the same frames and keeps at least as many of them, each no longer
    for q in data["questions"]:
        whole, cut = q["baseline"], q["baseline_focus"]
        assert cut["retrieved_ids"] == whole["retrieved_ids"]
        assert cut["kept_ids"][: len(whole["kept_ids"])] == whole["kept_ids"]
        assert all(len(c.split()) <= len(w.split()) for c, w in zip(cut["kept_texts"], whole["kept_texts"]))
    assert any(q["engine"]["retrieved_ids"] for q in data["questions"])
    assert all(i.startswith("frame:") for q in data["questions"] for i in q["baseline"]["kept_ids"])
    tp = data["ingestion"]["throughput"]
    assert tp["frames"] > tp["unique"] > 0 and 0 < tp["duplicate_share"] < 1
    assert data["ingestion"]["storage"]["png_per_frame"] > data["ingestion"]["storage"]["stored_per_frame"] > 0
    md = (out / "screenshot_qa.md").read_text()
    assert "| lookup |" in md and "baseline+focus" in md and "stored per frame" in md and '"seed": 7' in md
    png = (out / "screenshot_qa_families.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # every lookup of a plain fact on a one-day session is answered by both, question by question
    lookups = {q["question"]: q for q in data["questions"] if q["family"] == "lookup"}
    assert {"What is Ravi Tanaka's email address?", "What phone number did Ravi Tanaka give in an email?",
            "What is Ravi Tanaka's job at Acme Analytics?"} <= set(lookups)
    for q in lookups.values():
        assert q["engine"]["score"] == 1.0 and q["baseline"]["score"] == 1.0, (q["id"], q["question"])
    email = lookups["What is Ravi Tanaka's email address?"]
    assert any(email["gold"] in t for t in email["engine"]["kept_texts"])
    assert result["summary"]["families"]["lookup"]["engine"]["score"] == 1.0
    # high-sensitivity secrets never enter the engine's context
    from mirix_synth.screens import ScreenSynth

    synth = ScreenSynth(seed=7)
    synth.session(days=1, dwell=(1, 2))
    key = synth.facts["editor-key"].secret
    assert not any(key in t for q in data["questions"] for t in q["engine"]["kept_texts"])


def test_second_run_reuses_the_ingestion(tiny_run, monkeypatch, embedder):
    root, first = tiny_run
    from mirix_py.engine import Mirix

    def boom(*a, **k):
        raise AssertionError("re-ingested")

    monkeypatch.setattr(Mirix, "ingest_screenshots", boom)
    second = sq.run_benchmark(ScreenshotQAConfig(**TINY, budget_words=300), root / "out2", root / "cache", embedder=embedder)
    assert second["ingestion"]["reused"] is True
    assert second["ingestion"]["cache_key"] == first["ingestion"]["cache_key"]
    assert [q["id"] for q in second["questions"]] == [q["id"] for q in first["questions"]]
    assert all(q["engine"]["words"] <= 300 for q in second["questions"])


def test_llm_mode_with_a_scripted_model_and_judge(tiny_run, embedder):
    root, _ = tiny_run
    from mirix_py.llm.scripted import ScriptedChatCompletionClient

    client = ScriptedChatCompletionClient(lambda req: "Not present in the screenshots.")
    seen = []

    async def judge(c, question, gold, answer):
        seen.append((question, gold, answer))
        return gold == NOT_PRESENT and answer.startswith("Not present")

    result = sq.run_benchmark(ScreenshotQAConfig(**TINY, mode="llm"), root / "out_llm", root / "cache", embedder=embedder,
                    model_client=client, judge=judge)
    assert result["ingestion"]["reused"] is True
    fams = result["summary"]["families"]
    assert fams["abstention"]["engine"]["judge"] == 1.0 and fams["abstention"]["baseline"]["judge"] == 1.0
    assert fams["lookup"]["engine"]["judge"] == 0.0
    assert len(seen) == 2 * len(result["questions"])
    md = (root / "out_llm" / "screenshot_qa.md").read_text()
    assert "LLM judge" in md


# ------------------------------------------------------------------ CLI


@pytest.fixture
def cli():
    from mirix_py.eval.screenshot_cli import screenshots_command

    app = typer.Typer()
    app.command("screenshots")(screenshots_command)

    @app.command("other")
    def other() -> None:  # two commands, so typer keeps "screenshots" as a sub-command name
        pass

    return app


@pytest.mark.parametrize("args, message", [
    (["--mode", "fast"], "unknown mode 'fast'"),
    (["--days", "0"], "--days must be >= 1"),
    (["--days", "-2"], "--days must be >= 1"),
    (["--budget-words", "0"], "--budget-words must be >= 1"),
    (["--dwell", "x"], "--dwell must be"),
])
def test_cli_bad_input_is_a_clear_error(cli, tmp_path, args, message):
    result = CliRunner().invoke(cli, ["screenshots", "--out", str(tmp_path / "o"), "--cache-dir",
                                      str(tmp_path / "c"), *args])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split()), result.output
    assert not (tmp_path / "o").exists()


def test_cli_llm_mode_without_an_llm_is_a_clear_error(cli, tmp_path, monkeypatch):
    for var in ("MIRIX_LLM_PROVIDER", "MIRIX_LLM_MODEL", "MIRIX_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    result = CliRunner().invoke(cli, ["screenshots", "--mode", "llm", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "needs an LLM" in " ".join(result.output.split())


def test_cli_runs_on_the_cached_session(cli, tiny_run):
    root, _ = tiny_run
    result = CliRunner().invoke(cli, ["screenshots", "--days", "1", "--dwell", "1-2", "--workers", "1",
                                      "--out", str(root / "cli_out"), "--cache-dir", str(root / "cache")])
    assert result.exit_code == 0, result.output
    assert "reused cache" in result.output
    assert (root / "cli_out" / "screenshot_qa.md").exists()


def test_keep_within_counts_a_day_once_as_a_reader_is_shown_it():
    hits = [("[2 May 2024, 09:00] Slack: standup moved", ("f1",), "a"),  # 7 words
            ("[2 May 2024, 09:05] Mail: invoice due", ("f2",), "b"),  # 4 under a's day
            ("raw OCR text", ("f3",), "c")]  # no day of its own: as it is
    kept = sq.keep_within(hits, 14)
    assert [i for _, _, i in kept] == ["a", "b", "c"]
    assert kept[1][0] == "[09:05] Mail: invoice due" and kept[2][0] == "raw OCR text"
    assert [i for _, _, i in sq.keep_within(hits, 13)] == ["a", "b"]
