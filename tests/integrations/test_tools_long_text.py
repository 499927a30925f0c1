"""What the adapters send a long conversation to the engine as (`integrations.tools.inputs_within`):
inputs within its limit, in order, a long turn split into pieces (`text.pieces`)."""

from __future__ import annotations

from mirix_py.integrations.tools import inputs_within


def test_turns_go_in_order_as_inputs_within_the_limit():
    turns = [{"role": "user", "content": "Where to?"},
             {"role": "assistant", "content": "North, to the cliffs. Bring boots."}]
    assert inputs_within(turns, 25) == [
        [{"role": "user", "content": "Where to?"}],
        [{"role": "assistant", "content": "North, to the cliffs. "}],
        [{"role": "assistant", "content": "Bring boots."}]]
    assert inputs_within(turns, 100) == [turns]
