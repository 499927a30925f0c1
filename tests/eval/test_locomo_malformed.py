"""A LoCoMo file with a key missing is refused whole, before anything is ingested, in one message naming the
file, the conversation (and question) and what is missing: a QA without an answer was scored against "",
a conversation without session_1 ran on, a QA without its evidence key was counted as one with no evidence
(unscored), and `mirix eval locomo` said none of it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.eval.locomo import EvidenceReport, load_locomo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def without(path: str) -> Callable[[Any], None]:
    """Drop the key at `path` ("0.qa.1.answer") from the fixture's data."""
    *parents, last = path.split(".")

    def drop(data: Any) -> None:
        for step in parents:
            data = data[int(step)] if isinstance(data, list) else data[step]
        del data[int(last) if isinstance(data, list) else last]
    return drop


def replaced(path: str, value: Any) -> Callable[[Any], None]:
    *parents, last = path.split(".")

    def put(data: Any) -> None:
        for step in parents:
            data = data[int(step)] if isinstance(data, list) else data[step]
        data[int(last) if isinstance(data, list) else last] = value
    return put


FIRST, SECOND = "conversation 0 (mini-1) is not in LoCoMo's form: ", "conversation 1 (mini-2) is not in LoCoMo's form: "
MALFORMED = [
    pytest.param(without("0.conversation.session_1"),
                 FIRST + "'conversation' has no 'session_1' (its sessions run to session_2)", id="no-session_1"),
    pytest.param(replaced("1.conversation", {"speaker_a": "Cy"}),
                 SECOND + "'conversation' has no 'session_1' (no session at all)", id="no-session"),
    pytest.param(without("0.qa.1.answer"),
                 FIRST + "question 1 has no 'answer' (nor the 'adversarial_answer' of category 5)", id="no-answer"),
    pytest.param(without("0.qa.2.question"), FIRST + "question 2 has no 'question'", id="no-question"),
    pytest.param(without("0.qa.1.evidence"), FIRST + "question 1 has no 'evidence'", id="no-evidence"),
    pytest.param(replaced("0.qa.0.category", "temporal"),
                 FIRST + "question 0: category 'temporal' is none of LoCoMo's 1 to 5", id="category-in-words"),
    pytest.param(without("1.qa"), SECOND + "it has no 'qa'", id="no-qa"),
    pytest.param(without("0.conversation.session_2.1.dia_id"), FIRST + "session_2 turn 1 has no 'dia_id'",
                 id="turn-without-dia_id"),
    pytest.param(without("0.conversation.session_2_date_time"), FIRST + "session_2 has no 'session_2_date_time'",
                 id="session-without-date"),
]


def malformed_file(tmp_path: Path, damage: Callable[[Any], None]) -> Path:
    data = copy.deepcopy(json.loads(FIXTURE.read_text()))
    damage(data)
    path = tmp_path / "locomo_bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("damage", "says"), MALFORMED)
def test_the_loader_names_the_file_the_place_and_what_is_missing(tmp_path, damage, says):
    path = malformed_file(tmp_path, damage)
    with pytest.raises(ValueError) as refused:
        load_locomo(path)
    assert str(refused.value) == f"{path}: {says}"


@pytest.mark.parametrize(("top", "says"), [
    ('"a string"', "not LoCoMo's form: a string, not a list of conversations (or one conversation)"),
    ("[5]", "conversation 0 is not in LoCoMo's form: it is a number, not an object"),
    ("{oops", "not JSON (Expecting property name enclosed in double quotes"),
])
def test_a_file_of_another_form_is_refused_naming_it(tmp_path, top, says):
    path = tmp_path / "other.json"
    path.write_text(top)
    with pytest.raises(ValueError, match=f"^{path}: ") as refused:
        load_locomo(path)
    assert says in str(refused.value)


def test_an_empty_evidence_list_is_a_question_left_unscored(tmp_path):
    """Unlike a missing key, `"evidence": []` is LoCoMo's own (two questions of locomo_dev.json): loaded, counted."""
    report = EvidenceReport()
    (first, _) = load_locomo(malformed_file(tmp_path, replaced("0.qa.1.evidence", [])), report)
    assert first.questions[1].evidence == () and not first.questions[1].scored
    assert report.no_evidence == 2  # it and the fixture's own question 4


def test_conversations_without_a_sample_id_are_users_of_their_own(tmp_path):
    """Without `sample_id` each conversation is named by its place in the file; they all became "conv",
    one user whose memories every conversation's questions searched."""
    def unnamed(data: Any) -> None:
        for conversation in data:
            del conversation["sample_id"]

    conversations = load_locomo(malformed_file(tmp_path, unnamed))
    assert [c.sample_id for c in conversations] == ["conv-0", "conv-1"]
    assert len({c.user_id for c in conversations}) == 2


def test_conversations_sharing_a_sample_id_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"conversations share a sample_id \(\['mini-1'\]\)"):
        load_locomo(malformed_file(tmp_path, replaced("1.sample_id", "mini-1")))


def test_an_adversarial_question_needs_no_answer_of_its_own(tmp_path):
    """LoCoMo's category-5 questions carry `adversarial_answer` instead of `answer`."""
    def adversarial(data: Any) -> None:
        qa = data[0]["qa"][1]
        qa["adversarial_answer"] = qa.pop("answer")
        qa["category"] = 5

    (first, _) = load_locomo(malformed_file(tmp_path, adversarial))
    assert first.questions[1].answer == "a sunrise, to fetch" and first.questions[1].category == 5


@pytest.mark.parametrize(("damage", "says"), [MALFORMED[0], MALFORMED[2], MALFORMED[3]])
def test_eval_locomo_says_it_in_one_line_before_ingesting(tmp_path, monkeypatch, damage, says):
    """It was a traceback, or a run scoring a question against an empty answer."""
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    path = malformed_file(tmp_path, damage)
    cache = tmp_path / "cache"
    result = CliRunner().invoke(app, ["eval", "locomo", "--data", str(path), "--out", str(tmp_path / "out"),
                                      "--cache-dir", str(cache), "--no-baselines"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (result.output, result.exception)
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert line == f"error: {path}: {says}"
    assert not cache.exists() or not any(cache.iterdir())  # nothing ingested
    assert not (tmp_path / "out").exists()
