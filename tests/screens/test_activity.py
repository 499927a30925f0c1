"""Frame groups (`mirix_py.screens.activity`): the grouping, the lines kept, the cut, and where the
text comes from, on hand-made frames and memories."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from mirix_py.records import EpisodicMemory, ResourceMemory, SemanticMemory
from mirix_py.screens.activity import (
    SCREEN_GAP, ScreenFrame, build_groups, cut_lines, group_frames, memory_lines, unique_lines,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def frame(n: int, at: timedelta, app: str | None = "Firefox", window: str | None = "Trip notes",
          text: str | None = None, thumbnail: bool = False) -> ScreenFrame:
    return ScreenFrame(input_id=f"in_{n}", at=T0 + at, app=app, window_title=window, text=text, thumbnail=thumbnail)


def ids(groups):
    return [[f.input_id for f in g] for g in groups]


def test_a_change_of_app_or_window_or_a_long_gap_starts_a_group():
    s = timedelta(seconds=1)
    frames = [frame(1, 0 * s), frame(2, 30 * s), frame(3, 60 * s, window="Mail"), frame(4, 90 * s, app="Code"),
              frame(5, 90 * s + SCREEN_GAP, app="Code"),  # exactly the gap: still the same visit
              frame(6, 91 * s + 2 * SCREEN_GAP, app="Code")]  # a moment more than the gap: a new one
    assert ids(group_frames(frames)) == [["in_1", "in_2"], ["in_3"], ["in_4", "in_5"], ["in_6"]]


def test_frames_are_grouped_in_capture_order_whatever_order_they_come_in():
    s = timedelta(seconds=1)
    frames = [frame(3, 20 * s), frame(1, 0 * s), frame(9, 10 * s, app="Code"), frame(2, 5 * s)]
    assert ids(group_frames(frames)) == [["in_1", "in_2"], ["in_9"], ["in_3"]]
    assert group_frames([]) == []


def test_a_frame_without_app_or_window_groups_with_its_like():
    s = timedelta(seconds=1)
    frames = [frame(1, 0 * s, app=None, window=None), frame(2, s, app=None, window=None), frame(3, 2 * s)]
    assert ids(group_frames(frames)) == [["in_1", "in_2"], ["in_3"]]


def test_lines_are_kept_once_with_their_whitespace_collapsed():
    texts = ["Trip notes\n  ferry  to Bergen\n\n", "Trip notes\nferry to Bergen\nhotel Bryggen\n…", ""]
    assert unique_lines(texts) == ["Trip notes", "ferry to Bergen", "hotel Bryggen"]


def test_the_text_is_cut_at_a_line_break_and_says_so():
    assert cut_lines(["abc", "def"], 7) == ("abc\ndef", False)
    assert cut_lines(["abc", "def", "ghi"], 9) == ("abc\ndef", True)
    text, cut = cut_lines(["x" * 50], 10)
    assert cut and text == "x" * 9 + "…" and len(text) == 10
    assert cut_lines([], 10) == ("", False)


def _episode(summary: str, details: str = "", minute: int = 0, sources=("in_1",)) -> EpisodicMemory:
    return EpisodicMemory(id=f"epi_{minute}_{len(summary)}", user_id="ada", summary=summary, details=details,
                          event_type="screen_activity", occurred_at=T0 + timedelta(minutes=minute),
                          source_ids=list(sources))


def _resource(content: str, sources=("in_1",)) -> ResourceMemory:
    return ResourceMemory(id="res_1", user_id="ada", title="Screenshot of Firefox — Trip notes",
                          resource_type="screenshot", content=content, occurred_at=T0, source_ids=list(sources))


def test_memories_give_the_episodes_words_then_the_resource_content_without_repeats():
    episode = _episode("Viewed Firefox — Trip notes: ferry to Bergen hotel Bryggen", "ferry to Bergen\n…\nhotel Bryggen")
    resource = _resource("hotel Bryggen\ncheck-in 15:00")
    # the details' lines are in the summary already; the resource adds the line no episode holds
    assert memory_lines([episode, resource], {"in_1"}) == [
        "Viewed Firefox — Trip notes: ferry to Bergen hotel Bryggen", "check-in 15:00"]
    fact = SemanticMemory(id="sem_1", user_id="ada", name="Bergen", summary="A city in Norway", source_ids=["in_1"])
    assert memory_lines([fact], {"in_1"}) == []  # only what screens produced (episodes, resources) says what was read


def test_a_windows_resource_counts_for_the_group_of_its_newest_frame_only():
    # one resource per window, updated in place: its content is what its newest frame (in_3) showed
    resource = _resource("boarding pass row 12", sources=("in_1", "file.png", "in_3", "caller-id"))
    assert memory_lines([resource], {"in_3"}) == ["boarding pass row 12"]
    assert memory_lines([resource], {"in_1", "in_2"}) == []


def test_a_group_takes_the_input_logs_text_while_every_frame_keeps_it():
    s = timedelta(seconds=1)
    frames = [frame(1, 0 * s, text="Trip notes\nferry to Bergen", thumbnail=True),
              frame(2, 30 * s, text="Trip notes\nhotel Bryggen")]
    episode = _episode("Viewed Firefox — Trip notes", "something the rules wrote")
    [group] = build_groups(frames, {"in_1": [episode], "in_2": [episode]})
    assert group.text == "Trip notes\nferry to Bergen\nhotel Bryggen" and group.text_from == ["input_log"]
    assert (group.frames, group.input_ids, group.thumbnail_ids) == (2, ["in_1", "in_2"], ["in_1"])
    assert group.memory_ids == [episode.id]  # linked once, though both frames made it
    assert (group.first_at, group.last_at) == (T0, T0 + 30 * s)
    assert (group.app, group.window_title, group.text_truncated) == ("Firefox", "Trip notes", False)


def test_once_compacted_the_text_comes_from_the_memories_the_frames_made():
    s = timedelta(seconds=1)
    frames = [frame(1, 0 * s), frame(2, 30 * s, text="Trip notes\nsleeper cabin"), frame(3, 60 * s, app="Code")]
    episode = _episode("Viewed Firefox — Trip notes", "Trip notes\nferry to Bergen", minute=1)
    resource = _resource("Trip notes\nhotel Bryggen")  # in_1 is its newest frame
    first, second = build_groups(frames, {"in_1": [resource, episode]})
    # the frame still pending keeps its own text; the compacted one's is its memories'
    assert first.text == "Trip notes\nsleeper cabin\nViewed Firefox — Trip notes\nferry to Bergen\nhotel Bryggen"
    assert first.text_from == ["input_log", "memories"]
    assert first.memory_ids == [resource.id, episode.id]  # in time order
    assert (second.app, second.text, second.text_from, second.memory_ids) == ("Code", "", [], [])


def test_a_long_text_is_cut_to_the_limit():
    lines = "\n".join(f"line {i} of a long page" for i in range(200))
    [group] = build_groups([frame(1, timedelta(0), text=lines)], {}, text_chars=100)
    assert group.text_truncated and len(group.text) <= 100 and group.text.startswith("line 0 of a long page")
