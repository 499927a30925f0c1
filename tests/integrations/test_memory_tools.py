"""The memory tools every adapter wraps (`integrations.tools`): what a model gets back when its call
is bad. A tool that raises ends the agent's run (pydantic-ai) or shows the model only "an error
occurred" (the Agents SDK); an answer saying what was wrong lets it call again."""

from __future__ import annotations

import asyncio

import pytest

from mirix_py import Mirix
from mirix_py.integrations.tools import memory_tools


@pytest.fixture
def tools(tmp_path, embedder):
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.add("Tom, Ada's brother, flies planes for a regional airline.", user_id="ada")
        yield {fn.__name__: fn for fn in memory_tools(mx, "ada")}


@pytest.mark.parametrize("args, says", [
    (("",), "Not searched: search query is empty"),
    (("Tom\x00",), "Not searched: search query holds a NUL"),
    (("Tom", "3"), "Not searched: max_results must be a whole number, not '3'"),
])
def test_a_bad_search_is_an_answer_the_model_can_act_on(tools, args, says):
    assert asyncio.run(tools["search_memory"](*args)).startswith(says)


def test_a_good_search_still_finds(tools):
    assert "regional airline" in asyncio.run(tools["search_memory"]("Who flies planes?"))
