"""What the adapters send a long conversation to the engine as (`integrations.tools.inputs_within`):
inputs within its limit, in order, a long turn split into pieces (`text.pieces`)."""

from __future__ import annotations

from mirix_py.boundary.sizes import MAX_ADD_MESSAGES
from mirix_py.integrations.tools import inputs_within


def test_turns_go_in_order_as_inputs_within_the_limit():
    turns = [{"role": "user", "content": "Where to?"},
             {"role": "assistant", "content": "North, to the cliffs. Bring boots."}]
    assert inputs_within(turns, 25) == [
        [{"role": "user", "content": "Where to?"}],
        [{"role": "assistant", "content": "North, to the cliffs. "}],
        [{"role": "assistant", "content": "Bring boots."}]]
    assert inputs_within(turns, 100) == [turns]


def test_an_input_holds_at_most_as_many_messages_as_a_rest_add_takes():
    turns = [{"role": "user", "content": f"turn {n}"} for n in range(MAX_ADD_MESSAGES * 2 + 1)]
    inputs = inputs_within(turns, 10**6)
    assert [len(i) for i in inputs] == [MAX_ADD_MESSAGES, MAX_ADD_MESSAGES, 1]
    assert [t for i in inputs for t in i] == turns
