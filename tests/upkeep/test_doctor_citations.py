"""`doctor` finds an index of the ids memories cite (`memory_source`) that drifted from the memories'
`source_ids` (rows removed or added by hand, a trigger dropped or disabled), and `--repair` makes its
triggers and rows again, so deleting a turn takes back what it restated (`upkeep/doctor.py`,
`store.citations`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from mirix_py.engine import Mirix
from citation_rows import cited, indexed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
EPISODIC = ["episodic"]


@pytest.fixture
def mx(tmp_path, backend):
    engine = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    yield engine
    engine.close()


def say(mx: Mirix, prefix: str, lines: list[str], hours: int = 0) -> None:
    """A chat turn of kim's whose messages have ids `<prefix>-<n>`."""
    messages = [{"role": "user", "name": "Kim", "id": f"{prefix}-{n}", "content": line} for n, line in enumerate(lines)]
    mx.add(messages, user_id="kim", occurred_at=T0 + timedelta(hours=hours))


def episode_of(mx: Mirix, message_id: str) -> str:
    (memory_id,) = mx.store.made_from("kim", [message_id], EPISODIC)[message_id]
    return memory_id


def saying(mx: Mirix, word: str) -> list[str]:
    return [m.id for m in mx.list(user_id="kim") if word in m.search_text()]


def drop_trigger(mx: Mirix, name: str) -> None:
    on = " ON memory" if mx.engine.dialect.name == "postgresql" else ""
    with mx.engine.begin() as conn:
        conn.execute(text(f"DROP TRIGGER {name}{on}"))


def test_a_clean_store_reports_no_drift(mx):
    say(mx, "a", ["My brother Tobias is a carpenter.", "We had soup."])
    report = mx.doctor()
    assert report.clean, report.summary()
    assert (report.citations_missing, report.citations_extra, report.citation_triggers_off) == (0, 0, [])
    assert "citations_rebuilt" not in mx.doctor(repair=True).repaired


def test_a_drifted_index_is_reported_and_rebuilt_and_a_delete_then_takes_the_fact_back(mx):
    say(mx, "a", ["My brother Tobias is a carpenter.", "We had soup."])
    say(mx, "b", ["My sister Anna is a painter."], hours=1)
    (tobias,) = [i for i in saying(mx, "Tobias") if i != episode_of(mx, "a-0")]
    with mx.engine.begin() as conn:  # the fact's rows lost; Anna's turn said to cite Tobias's message too
        conn.execute(text("DELETE FROM memory_source WHERE memory_id = :m"), {"m": tobias})
        conn.execute(text("INSERT INTO memory_source (memory_id, source_id, user_id, memory_type) "
                          "VALUES (:m, 'a-0', 'kim', 'episodic')"), {"m": episode_of(mx, "b-0")})
    drop_trigger(mx, "memory_sources_insert")
    say(mx, "c", ["My aunt Maria is a doctor."], hours=2)  # written without its rows
    missing = cited(mx) - indexed(mx)
    assert {m for m, *_ in missing} >= {tobias, *saying(mx, "Maria")}

    report = mx.doctor()
    assert not report.clean
    assert (report.citations_missing, report.citations_extra, report.citation_triggers_off) \
        == (len(missing), 1, ["memory_sources_insert"])
    assert report.summary()["citation_triggers_off"] == ["memory_sources_insert"]

    fixed = mx.doctor(repair=True)
    assert fixed.clean, fixed.summary()
    assert fixed.repaired["citations_rebuilt"] == len(cited(mx)) and indexed(mx) == cited(mx)
    say(mx, "d", ["My cousin Ines is a pilot."], hours=3)  # the trigger writes the rows again
    assert indexed(mx) == cited(mx) and mx.doctor().clean

    mx.delete(episode_of(mx, "a-0"), user_id="kim", erase=True)
    mx.delete(episode_of(mx, "c-0"), user_id="kim")
    assert saying(mx, "Tobias") == [] and saying(mx, "Maria") == []
    assert saying(mx, "Anna") and saying(mx, "Ines")


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_disabled_trigger_is_reported_and_made_again(mx):
    say(mx, "a", ["My brother Tobias is a carpenter."])
    with mx.engine.begin() as conn:  # as a restore tool may leave it
        conn.execute(text("ALTER TABLE memory DISABLE TRIGGER memory_sources_delete"))
    assert mx.doctor().citation_triggers_off == ["memory_sources_delete"]
    assert mx.doctor(repair=True).clean
    mx.delete(episode_of(mx, "a-0"), user_id="kim")
    assert indexed(mx) == cited(mx)
