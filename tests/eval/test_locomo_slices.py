"""`mirix eval locomo` against a slow model: a seeded slice of the questions (`--questions N`), progress
lines in a log (stderr not a terminal), and every question's answers in the report files.

Fixture tests/fixtures/locomo_mini.json (see test_locomo_eval.py): questions with evidence by category
1: 1, 2: 1, 3: 1, 4: 3, 5: 1; three sessions in two conversations.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirix_py.eval.locomo import Question
from mirix_py.eval.locomo_eval import (
    LocomoEvalConfig, allocate_proportional, question_key, run_locomo, sample_questions,
)
from mirix_py.eval.progress import LineProgress
from mirix_py.eval.report import cell, write_report
from mirix_py.llm.scripted import ScriptedChatCompletionClient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"
GOLD = {q["question"]: q.get("answer", "") for c in json.loads(FIXTURE.read_text()) for q in c["qa"]}
LONG = "violin | " + "and also a very long explanation of it " * 10


def synthetic(sizes: dict[int, int]) -> list[tuple[None, Question]]:
    """Questions (conversation left out: sampling reads only the question) with the given category sizes."""
    out = []
    for cat, n in sizes.items():
        for i in range(n):
            out.append((None, Question(conversation_id=f"c{cat}", index=i, question=f"q{cat}.{i}", answer="a",
                                       category=cat, evidence=("D1:1",), raw_evidence=("D1:1",))))
    return out


# ------------------------------------------------------------------ the sample


def test_allocation_is_proportional_with_one_per_category_hand_computed():
    # LoCoMo-like sizes. One each, then 16 over capacities 281, 320, 95, 840 (of 1536): floors 2, 3, 0, 8
    # (13 of 16); the 3 left go to the largest remainders 16*c mod 1536: cat 3 (1520), cat 1 (1424), cat 4 (1152)
    assert allocate_proportional(20, {1: 282, 2: 321, 3: 96, 4: 841}) == {1: 4, 2: 4, 3: 2, 4: 10}
    # fewer than the categories: the largest ones get one
    assert allocate_proportional(2, {1: 282, 2: 321, 3: 96, 4: 841}) == {1: 0, 2: 1, 3: 0, 4: 1}
    # more than there is: everything; empty categories are left out
    assert allocate_proportional(50, {1: 3, 2: 0, 3: 1, 4: 5}) == {1: 3, 3: 1, 4: 5}
    for n in range(1, 10):
        take = allocate_proportional(n, {1: 3, 3: 1, 4: 5})
        assert sum(take.values()) == n and all(take[c] <= s for c, s in {1: 3, 3: 1, 4: 5}.items())


def test_sample_spreads_over_categories_and_is_deterministic_per_seed():
    pool = synthetic({1: 10, 2: 8, 3: 2, 4: 16, 5: 4})
    picked, info = sample_questions(pool, 12, seed=7)
    counts = Counter(q.category for _, q in picked)
    # one each, then 8 over capacities 9, 7, 1, 15 (of 32): floors 2, 1, 0, 3; remainders 8, 24, 8, 24
    # -> +1 to categories 2 and 4. Category 5 at the same rate: 4 * 12 / 36 = 1.33 -> 1
    assert counts == {1: 3, 2: 3, 3: 1, 4: 5, 5: 1}
    assert info["selected_1_4"] == 12 and info["selected"] == 13 and info["available_1_4"] == 36
    assert info["by_category"] == {"1": 3, "2": 3, "3": 1, "4": 5, "5": 1}
    # the file's order is kept, no question twice
    positions = [pool.index(p) for p in picked]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    # same seed, same slice; other seeds, other slices
    again, _ = sample_questions(pool, 12, seed=7)
    assert [question_key(q) for _, q in again] == [question_key(q) for _, q in picked]
    others = {tuple(question_key(q) for _, q in sample_questions(pool, 12, seed=s)[0]) for s in range(8)}
    assert len(others) > 1


def test_sample_larger_than_available_takes_everything():
    pool = synthetic({1: 2, 2: 1, 4: 3, 5: 2})
    picked, info = sample_questions(pool, 1000, seed=0)
    assert [question_key(q) for _, q in picked] == [question_key(q) for _, q in pool]
    assert info["requested"] == 1000 and info["selected_1_4"] == 6 and info["selected"] == 8


def test_run_on_a_slice_scores_only_the_slice(tmp_path):
    report = run_locomo(LocomoEvalConfig(data=FIXTURE, cache_dir=tmp_path / "cache", questions=4, seed=3,
                                         baselines=False), embedder=None)
    cats = Counter(r["category"] for r in report["questions"])
    # 4 of the 6 scored questions: one from each category 1-4; category 5 at the rate 1 * 4 / 6 -> 1
    assert cats == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    assert report["data"]["scored_questions_by_category"] == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}
    assert report["data"]["sample"]["requested"] == 4 and report["config"]["questions"] == 4
    assert report["summary"]["engine"]["overall_1_4"]["n"] == 4
    same = run_locomo(LocomoEvalConfig(data=FIXTURE, cache_dir=tmp_path / "cache", questions=4, seed=3,
                                       baselines=False), embedder=None)
    assert [r["id"] for r in same["questions"]] == [r["id"] for r in report["questions"]]
    with pytest.raises(ValueError):
        LocomoEvalConfig(data=FIXTURE, questions=0)


# ------------------------------------------------------------------ progress lines


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_line_progress_prints_every_slow_item_and_throttles_fast_stages():
    out, clock = io.StringIO(), Clock()
    progress = LineProgress(out, every_item={"answers"}, interval=10.0, clock=clock)
    progress("answers", 0, 4, "readers: engine chat")
    for i in range(1, 5):
        clock.now += 5.0
        progress("answers", i, 4, f"q{i} cat 4: engine chat F1 1.00 CORRECT")
    for i in range(1, 101):  # 100 fast searches, 0.3 s each: a line at most every 10 s, and the last
        clock.now += 0.3
        progress("engine searches", i, 100)
    lines = out.getvalue().splitlines()
    answers = [l for l in lines if "answers" in l]
    assert len(answers) == 5 and "answers 0/4 (0%) · started · readers: engine chat" in answers[0]
    assert re.search(r"\[locomo +10\.0s\] answers 2/4 \(50%\) · 5\.0 s/item · ~10 s left · q2 cat 4", answers[2])
    assert "answers 4/4 (100%) · 5.0 s/item · done in 20.0 s" in answers[4]
    searches = [l for l in lines if "engine searches" in l]
    assert 2 <= len(searches) <= 4 and "engine searches 100/100" in searches[-1]
    # the search stage started when the previous event (the last answer) happened
    assert "done in 30.0 s" in searches[-1]


def answering_script(req):
    if req.agent == "topic_extractor":
        return json.dumps({"topics": ["memory"], "start": None, "end": None})
    if req.agent in ("chat_agent", "answerer"):
        question = req.last_text.split("\n\nAnswer with a short phrase")[0].split("user: ")[-1].strip()
        if question.startswith("What instrument is Cy learning"):
            return LONG  # long, with a pipe: cut and escaped in the Markdown
        gold = GOLD.get(question, "")
        if not gold or question.startswith("What did Bo say about Ann's cat"):
            return "Not mentioned in the conversation."
        return gold
    if req.agent == "judge":
        gold = re.search(r"Gold answer: (.*)", req.last_text).group(1)
        answer = re.search(r"Answer to grade: (.*)", req.last_text).group(1)
        return json.dumps({"reasoning": "-", "label": "CORRECT" if gold.lower() in answer.lower() else "WRONG"})
    raise AssertionError(f"unexpected agent {req.agent!r}")


def test_cli_llm_mode_on_a_slice_logs_progress_and_reports_every_answer(tmp_path, monkeypatch):
    import mirix_py.llm.clients as clients
    from mirix_py.cli.commands import app

    client = ScriptedChatCompletionClient(answering_script)
    monkeypatch.setattr(clients, "build_model_client", lambda settings: client)
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--mode", "llm",
                                      "--ingest-mode", "offline", "--questions", "6", "--seed", "1",
                                      "--out", str(out), "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    log = result.stderr  # not a terminal: plain lines, no bars
    assert "━" not in log
    # a line per ingested session and per answered question, with counts and elapsed time
    ingest = re.findall(r"^\[locomo +[0-9.]+s\] ingest sessions (\d)/3 .*$", log, re.M)
    assert ingest == ["0", "1", "2", "3"]
    assert re.search(r"ingest sessions 1/3 \(33%\) · [0-9.]+ s/item · ~[0-9]+ s left · mini-1/session_1: \d turns", log)
    answered = re.findall(r"^\[locomo +[0-9.]+s\] answers (\d)/7 .*$", log, re.M)
    assert answered == [str(i) for i in range(8)]  # all 6 scored + the adversarial one
    assert re.search(r"answers \d/7 .* · mini-2#0 cat 4: engine chat F1 [0-9.]+ (CORRECT|WRONG), full context "
                     r"F1 [0-9.]+ (CORRECT|WRONG)", log)
    assert re.search(r"answers \d/7 .* · mini-1#5 cat 5: engine chat F1 1\.00, full context F1 1\.00$", log, re.M)
    assert "questions: a sample of 6 of 6 scored" in result.stdout

    data = json.loads((out / "locomo_eval.json").read_text())
    assert data["data"]["sample"]["requested"] == 6
    rows = {r["id"]: r for r in data["questions"]}
    violin = rows["mini-2#0"]
    assert violin["category"] == 4 and violin["gold"] == GOLD["What instrument is Cy learning?"]
    assert violin["answers"]["engine chat"]["answer"] == LONG  # whole in the JSON
    assert violin["answers"]["engine chat"]["judge"] == "CORRECT" and 0 < violin["answers"]["engine chat"]["f1"] < 1
    assert "evidence_recall" in violin["systems"]["engine"]

    md = (out / "locomo_eval.md").read_text()
    section = md.split("## Per question")[1].split("\n## ")[0]
    assert ("| id | cat | question | gold | evidence recall (750 w) | engine chat: answer | F1 | judge | "
            "full context: answer | F1 | judge |") in section
    table = [l for l in section.splitlines() if l.startswith("| mini-")]
    assert len(table) == 7
    row = next(l for l in table if l.startswith("| mini-2#0 |"))
    assert "| 4 single-hop | What instrument is Cy learning? |" in row
    assert "violin \\| and also a very long" in row and "…" in row and LONG.strip() not in row
    bake = next(l for l in table if l.startswith("| mini-1#2 |"))
    cells = [c.strip() for c in bake.strip("|").split(" | ")]
    gold = GOLD["What did Ann bake for her sister?"]
    assert cells[3] == gold and cells[5] == gold and cells[6] == "1.00" and cells[7] == "CORRECT"
    adversarial = next(l for l in table if l.startswith("| mini-1#5 |"))
    assert "| 5 adversarial |" in adversarial and adversarial.rstrip().endswith("| – |")  # not judged


def test_offline_report_lists_every_question_with_its_recall(tmp_path):
    report = run_locomo(LocomoEvalConfig(data=FIXTURE, cache_dir=tmp_path / "cache", baselines=False),
                        embedder=None)
    md = write_report(report, tmp_path / "out")["markdown"].read_text()
    section = md.split("## Per question")[1].split("\n## ")[0]
    assert "need `--mode llm`" in section
    rows = [l for l in section.splitlines() if l.startswith("| mini-")]
    assert len(rows) == 7
    marathon = next(l for l in rows if l.startswith("| mini-2#1 |"))
    assert marathon.rstrip().endswith("| 0.00 |")  # its evidence D1:9 names no turn: recall 0


def test_cell_is_one_escaped_line_cut_with_an_ellipsis():
    assert cell("a\nb | c", 20) == "a b \\| c"
    assert cell("x" * 30, 10) == "x" * 9 + "…"
    assert cell(None, 10) == "–" and cell("", 10) == "–"


def test_progress_uses_bars_on_a_terminal_and_lines_elsewhere(monkeypatch):
    from rich.console import Console
    from rich.progress import Progress

    from mirix_py.eval import cli

    monkeypatch.setattr(cli, "err", Console(file=io.StringIO(), force_terminal=True))
    bars, update = cli.run_progress()
    assert isinstance(bars, Progress)
    update("answers", 1, 2, "a note")  # the rich callback takes the note too
    monkeypatch.setattr(cli, "err", Console(file=io.StringIO(), force_terminal=False))
    _, update = cli.run_progress()
    assert isinstance(update, LineProgress)
