"""A caller's ids that memories cite (an add's `source_id`, a message's `id`) never have the form of the
engine's input ids ("in_" and 32 hex digits): cited beside the input's own id, one would be read as an
input id, another user's even. `add` refuses one before anything is written; so does a screenshot's
admission. Other ids starting "in_" ("in_progress") are a caller's own."""

from __future__ import annotations

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.records import INPUT_PREFIX, InputStatus


@pytest.fixture
def mx(tmp_path):
    engine = Mirix(tmp_path / "data", embedder=None)
    yield engine
    engine.close()


def _stored(mx, user_id):
    """What the store holds of the user: their inputs (of every status) and memories."""
    return mx.inputs.newest(user_id=user_id, statuses=list(InputStatus), limit=100), mx.list(user_id=user_id)


def test_an_add_whose_source_id_poses_as_another_users_input_is_refused_and_writes_nothing(mx):
    [theirs] = mx.add("My sister is a nurse in Porto.", user_id="bob", source_id="ward-7").input_ids

    with pytest.raises(InvalidInput) as refused:
        mx.add("I went sailing on Lake Geneva with Tom.", user_id="alice", source_id=theirs)

    assert str(refused.value) == (f"source_id {theirs!r} has the form of the engine's input ids ({INPUT_PREFIX!r} and "
                                  "32 hex digits; memories cite it beside them): choose an id that does not")
    assert _stored(mx, "alice") == ([], [])


@pytest.mark.parametrize("wait", [True, False])
def test_a_message_id_starting_as_an_input_id_is_refused_too(mx, wait):
    said = [{"role": "user", "content": "Hi there.", "id": "D1:1"},
            {"role": "user", "content": "I keep bees.", "id": "in_0123456789abcdef0123456789abcdef"}]

    with pytest.raises(InvalidInput, match="^message 1 id 'in_0123456789abcdef0123456789abcdef' has the form of the engine's input ids"):
        mx.add(said, user_id="alice", wait=wait)

    assert _stored(mx, "alice") == ([], [])


@pytest.mark.parametrize("source_id, message_id", [("chat/in_progress", "turn-in_1"), ("in_progress", "in_1"),
                                                   ("in_0123456789ABCDEF0123456789ABCDEF", "in_0123")])
def test_ids_not_of_the_input_ids_form_are_taken(mx, source_id, message_id):
    result = mx.add([{"role": "user", "content": "I keep bees on the roof.", "id": message_id}], user_id="alice",
                    source_id=source_id)
    episode = next(m for m in mx.list(user_id="alice", memory_types=["episodic"]))
    assert episode.source_ids == [*result.input_ids, source_id, message_id]


def test_a_screenshot_source_id_of_the_input_ids_form_is_refused_alone(mx, tmp_path):
    """A screenshot's own `source_id` is checked as `add`'s, before any batch (where its refusal would
    fail the frames read with it); a folder's file names ("in_frame.png", an image named like an input
    id) never have the form, so every file is read."""
    pytest.importorskip("PIL")
    from PIL import Image

    posing = "in_0123456789abcdef0123456789abcdef"
    folder = tmp_path / "shots"
    folder.mkdir()
    Image.new("RGB", (64, 32), "white").save(folder / "in_frame.png")
    with pytest.raises(InvalidInput, match=f"^source_id '{posing}' has the form of the engine's input ids"):
        mx.add_screenshot(folder / "in_frame.png", user_id="alice", captured_at=None, source_id=posing)
    assert _stored(mx, "alice") == ([], [])

    Image.new("RGB", (64, 32), "white").save(folder / f"{posing}.png")
    report = mx.ingest_screenshots(folder, user_id="alice")
    assert sorted(o.name for o in report.outcomes if o.status != "invalid") == [f"{posing}.png", "in_frame.png"]
