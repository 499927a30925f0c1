"""A model's time that names no day ("2024", "2024-04"), digits, or a JSON number is refused at the tool
call with the format wanted, never read as seconds since 1970; a day alone is read alike in ISO 8601 and
in words. Driven through the engine by scripted models."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.llm.scripted import ScriptRequest

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
# two messages a batch: the episodic manager sums up an event told across several (one is its own episode)
CLIMB = [{"role": "user", "name": "Ada", "id": "n1", "content": "Yesterday I went climbing with my brother Tom."},
         {"role": "user", "name": "Ada", "id": "n2", "content": "Tom led the hardest route of the day."}]
GUIDE = [{"role": "user", "name": "Ada", "id": "n3", "content": "After climbing with Tom, he booked a mountain guide."},
         {"role": "user", "name": "Ada", "id": "n4", "content": "Tom wants to lead the hardest route again."}]
SUMMARY = "Ada went climbing with Tom, who led the hardest route"


def routed(memory_type: str, manager):
    """A script whose router sends every batch to one memory type's manager, answered by `manager`."""
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": [memory_type]})]
        if req.agent.startswith(memory_type):
            return manager(req)
        return [("nothing_to_record", {})]
    return script


def episodic(manager):
    return routed("episodic", manager)


def model_episode(mx):
    (episode,) = [m for m in mx.list(user_id="ada", memory_types=["episodic"]) if m.event_type == "summary"]
    return episode


@pytest.mark.parametrize(("when", "reason"), [
    ("2024", "occurred_at '2024' names no day"),
    ("2024-04", "occurred_at '2024-04' names no day"),
    ("1700000000", "occurred_at '1700000000' is not a date"),
    ("sometime in spring", "is not a date"),
    (2024, "occurred_at: Input should be a valid string"),  # the schema's string: a number never reaches the tool
])
def test_a_models_date_without_a_day_or_in_digits_is_refused_never_read_as_seconds(scripted_mx, when, reason):
    """An episode a model dated "2024" was stored at 1970-01-01 00:33:44 (2,024 seconds after 1970),
    and "1700000000" at 14 November 2023: the record read the digits as Unix seconds."""
    sent: list[object] = []

    def manager(req: ScriptRequest):
        sent.append(when if not sent else None)  # corrected: the messages' time
        return [("insert_episodic", {"summary": SUMMARY, **({"occurred_at": sent[-1]} if sent[-1] else {})})]

    mx, _ = scripted_mx(episodic(manager))
    result = mx.add(CLIMB, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert any(reason in r for r in result.rejected), result.rejected
    if isinstance(when, str):  # the model is told what to write
        assert any("ISO 8601 date or date-time (2024-05-01" in r for r in result.rejected), result.rejected
    assert model_episode(mx).occurred_at == WHEN


@pytest.mark.parametrize("when", [1700000000, 2024, 1.7e9, True, "1700000000", "2024", ["2024-04-01"]])
def test_a_models_update_that_dates_a_memory_by_a_number_is_refused(scripted_mx, when):
    """`update_memory`'s fields take any JSON: an occurred_at of 1700000000 moved a memory to
    November 2023."""
    fact_about_tom = [("insert_semantic", {"name": "Tom", "summary": "Tom went climbing with Ada"})]
    mx, client = scripted_mx(routed("semantic", lambda req: fact_about_tom))
    mx.add(CLIMB, user_id="ada", occurred_at=WHEN)
    (fact,) = [m for m in mx.list(user_id="ada", memory_types=["semantic"]) if m.summary == "Tom went climbing with Ada"]
    rounds: list[str] = []

    def update(req: ScriptRequest):
        rounds.append(req.task_text)
        fields: dict[str, object] = {"details": "Tom booked a mountain guide"}
        if len(rounds) == 1:
            fields["occurred_at"] = when
        return [("update_memory", {"memory_id": fact.id, "fields": fields})]

    client._script = routed("semantic", update)
    result = mx.add(GUIDE, user_id="ada", occurred_at=WHEN.replace(day=5))
    assert result.status.value == "processed", result.error
    assert any("occurred_at" in r and ("must be a date written as text" in r or "is not a date" in r
                                       or "names no day" in r) for r in result.rejected), result.rejected
    after = mx.get(fact.id, user_id="ada")
    assert after.details == "Tom booked a mountain guide" and after.occurred_at == WHEN


def test_a_day_alone_reads_alike_in_iso_and_in_words(scripted_mx):
    """"2024-04-01" was stored at midnight, "1 April 2024" at the batch's time of day: both are the
    same day said the same way, and now both take the batch's time of day."""
    stored = []
    for when in ("2024-04-01", "1 April 2024"):
        mx, _ = scripted_mx(episodic(lambda req, when=when: [("insert_episodic", {"summary": SUMMARY,
                                                                                  "occurred_at": when})]))
        result = mx.add(CLIMB, user_id="ada", occurred_at=WHEN)
        assert result.status.value == "processed", result.error
        stored.append(model_episode(mx).occurred_at)
    assert stored == [datetime(2024, 4, 1, 18, 30, tzinfo=timezone.utc)] * 2


@pytest.mark.parametrize("when", ["", "   "])
def test_a_blank_date_is_the_messages_time_without_a_correction_round(scripted_mx, when):
    """A weak model writes "" for "not given": it was refused, and the model sent a round to correct
    what it had meant as omitted."""
    rounds: list[str] = []

    def manager(req: ScriptRequest):
        rounds.append(req.task_text)
        return [("insert_episodic", {"summary": SUMMARY, "occurred_at": when})]

    mx, _ = scripted_mx(episodic(manager))
    result = mx.add(CLIMB, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert not any("occurred_at" in r for r in result.rejected), result.rejected
    assert len(rounds) == 1
    assert model_episode(mx).occurred_at == WHEN


def test_an_update_with_a_blank_date_keeps_the_memorys_date(scripted_mx):
    """A blank `occurred_at` among an update's fields is left out, as an insert's is: the other fields
    change, the date stays."""
    fact_about_tom = [("insert_semantic", {"name": "Tom", "summary": "Tom went climbing with Ada"})]
    mx, client = scripted_mx(routed("semantic", lambda req: fact_about_tom))
    mx.add(CLIMB, user_id="ada", occurred_at=WHEN)
    (fact,) = [m for m in mx.list(user_id="ada", memory_types=["semantic"]) if m.summary == "Tom went climbing with Ada"]
    client._script = routed("semantic", lambda req: [("update_memory", {
        "memory_id": fact.id, "fields": {"details": "Tom booked a mountain guide", "occurred_at": " "}})])
    result = mx.add(GUIDE, user_id="ada", occurred_at=WHEN.replace(day=5))
    assert result.status.value == "processed", result.error
    assert not any("occurred_at" in r for r in result.rejected), result.rejected
    after = mx.get(fact.id, user_id="ada")
    assert after.details == "Tom booked a mountain guide" and after.occurred_at == WHEN
