"""MirixSession against the SDK's own SQLiteSession with a user message and a reply longer than the
engine's `max_input_chars`: the run ends as it does there, the items come back exactly as added, and
every word said is remembered (in consecutive inputs), so a search finds the last ones."""

from __future__ import annotations

import asyncio

import pytest
from agents import SQLiteSession, set_tracing_disabled
from test_openai_agents_plain_text import converse

from long_messages import DIARY, LIMIT
from mirix_py.integrations.openai_agents import MirixSession

set_tracing_disabled(True)  # nothing leaves the machine

REPLY = " ".join(f"Point {n}: the walks were calm." for n in range(1, 61)) + " Finally, pack the marmalade sandwiches."


@pytest.fixture
def mx(limited_mx):
    return limited_mx


def test_a_run_with_messages_over_the_limit_ends_as_with_sqlite_session(mx):
    assert mx.settings.max_input_chars == LIMIT < min(len(DIARY), len(REPLY))
    turns = [(DIARY, REPLY), ("Thanks!", "You're welcome.")]
    reference = SQLiteSession("s")
    session = MirixSession("s", user_id="ada", mx=mx)
    assert converse(session, turns) == converse(reference, turns)
    # the items come back as added, the long ones whole, as SQLiteSession's do
    assert asyncio.run(session.get_items()) == asyncio.run(reference.get_items())
    assert asyncio.run(MirixSession("s", user_id="ada", mx=mx).get_items()) == asyncio.run(reference.get_items())

    # words only the end of each long message holds are found
    assert "zeppelin landed beside the lighthouse" in mx.search("zeppelin lighthouse", user_id="ada")[0].text
    assert "marmalade sandwiches" in mx.search("marmalade sandwiches", user_id="ada")[0].text
    said = " ".join(m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"], limit=100))
    assert all(f"Day {n}." in said for n in range(1, 31)) and all(f"Point {n}:" in said for n in range(1, 61))
    session.close()
