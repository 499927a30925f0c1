"""Every writer of a core block's `said` keeps the clock each line was said by (`said_offsets`): a
model's core tools the batch's, `core_append` and `core_rewrite` the user's zone (MIRIX_TIMEZONE) now."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from mirix_py.boundary.timezones import said_offset
from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.settings import Settings

LA = "America/Los_Angeles"
BROTHER = "has a brother, Tom"
BAKERY = "works at a bakery"


def _appending(lines_by_message: dict[str, str]):
    """A model that routes each batch to core memory and appends the line its message calls for."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            line = next((text for ident, text in lines_by_message.items() if f"[id={ident}]" in req.task_text), None)
            return [("core_memory_append", {"label": "human", "text": line})] if line else [("nothing_to_record", {})]
        return [("nothing_to_record", {})]
    return script


def test_a_models_core_line_is_dated_on_the_batchs_clock_and_keeps_it(tmp_path, embedder):
    client = ScriptedChatCompletionClient(_appending({"m1": BROTHER, "m2": BAKERY}))
    settings = Settings(data_dir=tmp_path / "d", timezone=LA)
    with Mirix(settings=settings, embedder=embedder, model_client=client) as mx:
        first = mx.add([{"role": "user", "name": "Ada", "id": "m1", "content": "I went climbing with my brother Tom."}],
                       user_id="ada", occurred_at="2026-01-02T07:30:00Z")  # 23:30 on 1 January in Los Angeles
        assert first.mode == "llm" and first.status.value == "processed", first.error
        block = mx.core_memory(user_id="ada")["human"]
        assert block.said_offsets.get(BROTHER) == -480
        assert f"{BROTHER} (said 1 January 2026)" in block.dated_lines()
        # a later batch on another clock: the new line takes that batch's, the held line keeps its own
        mx.add([{"role": "user", "name": "Ada", "id": "m2", "content": "I started working at a bakery."}],
               user_id="ada", occurred_at="2026-01-02T16:31:00+09:00")
        block = mx.core_memory(user_id="ada")["human"]
    assert block.said_offsets.get(BROTHER) == -480 and block.said_offsets.get(BAKERY) == 540
    assert {f"{BROTHER} (said 1 January 2026)", f"{BAKERY} (said 2 January 2026)"} <= set(block.dated_lines())


def _offsets_now(zone: str | None, call) -> set[int | None]:
    """`call()`, and the offsets of `zone` around it (a change of summer time may fall in between)."""
    clock = ZoneInfo(zone) if zone else None
    before = datetime.now(timezone.utc)
    call()
    return {said_offset(None, t, clock) for t in (before, datetime.now(timezone.utc))}


@pytest.mark.parametrize("zone", [LA, None])
def test_an_api_append_says_its_line_now_on_the_users_clock(tmp_path, embedder, zone):
    with Mirix(settings=Settings(data_dir=tmp_path / "d", timezone=zone), embedder=embedder) as mx:
        offsets = _offsets_now(zone, lambda: mx.core_append("human", "plays the cello", user_id="ada"))
        block = mx.core_memory(user_id="ada")["human"]
    assert block.said_offsets.get("plays the cello") in offsets
    assert ("plays the cello" in block.said_offsets) == (zone is not None)


def test_an_api_rewrite_keeps_a_held_lines_clock_and_drops_a_removed_lines(tmp_path, embedder):
    with Mirix(settings=Settings(data_dir=tmp_path / "d", timezone=LA), embedder=embedder) as mx:
        in_la = _offsets_now(LA, lambda: mx.core_append("human", "plays the cello", user_id="ada"))
    tokyo = "Asia/Tokyo"  # the user moved: what they say now is said on Tokyo's clock
    with Mirix(settings=Settings(data_dir=tmp_path / "d", timezone=tokyo), embedder=embedder) as mx:
        mx.core_rewrite("human", "plays the cello\nlives in Tokyo", user_id="ada")
        rewritten = mx.core_memory(user_id="ada")["human"]
        assert rewritten.said_offsets.get("plays the cello") in in_la
        assert rewritten.said_offsets.get("lives in Tokyo") == 540
        mx.core_rewrite("human", "lives in Tokyo", user_id="ada")
        assert mx.core_memory(user_id="ada")["human"].said_offsets == {"lives in Tokyo": 540}
