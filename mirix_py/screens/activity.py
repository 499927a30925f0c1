"""Screen activity: screenshot inputs grouped into what a person would call one stretch of work.

A frame group is consecutive screenshot inputs of the same app and window title. A new group starts
when the app or the window title changes, or when more than `SCREEN_GAP` passes between two frames
(the screen was left, or capture paused): five minutes, longer than `mirix capture`'s interval and
its per-app batching window, short enough that a window looked at in the morning and again after
lunch shows as two visits.

Each group says what was read on screen: the frames' OCR text while the input log still holds it
(pending frames, or `keep_ocr_text`), else the text of the memories those frames produced (their
`source_ids` name the inputs): the screen episodes' summaries and details, and a screenshot
resource's content when its newest frame is in the group (`memory_lines`). Lines are deduplicated
(a window shows the same lines frame after frame) and the whole is cut to `GROUP_TEXT_CHARS` at a
line break.

Everything here is pure: `Mirix.screen_activity` reads the input log and the memories and calls
`build_groups`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Collection, Iterable, Literal, Mapping, Sequence

from pydantic import BaseModel, Field

from mirix_py.records import EpisodicMemory, Memory, ResourceMemory
from mirix_py.store.questions import INPUT_PREFIX

__all__ = ["GROUP_TEXT_CHARS", "SCREEN_GAP", "FrameGroup", "ScreenFrame", "build_groups", "cut_lines",
           "group_frames", "memory_lines", "unique_lines"]

SCREEN_GAP = timedelta(minutes=5)  # more than this between two frames of one window: a new group
GROUP_TEXT_CHARS = 1500  # the text shown per group; the memories hold the rest
ELLIPSIS = "…"

TextFrom = Literal["input_log", "memories"]


class ScreenFrame(BaseModel):
    """One screenshot input as the grouping sees it."""

    input_id: str
    at: datetime = Field(description="Capture time (the input's occurred_at).")
    app: str | None = None
    window_title: str | None = None
    text: str | None = Field(default=None, description="The OCR text, None once the input log compacted it.")
    thumbnail: bool = Field(default=False, description="A thumbnail of this frame is still kept.")


class FrameGroup(BaseModel):
    """Consecutive frames of one app and window, with what was read on them."""

    app: str | None = None
    window_title: str | None = None
    first_at: datetime
    last_at: datetime
    frames: int = Field(description="How many frames (screenshot inputs) the group holds.")
    input_ids: list[str] = Field(description="The frames' input ids, oldest first.")
    thumbnail_ids: list[str] = Field(default_factory=list,
                                     description="Input ids whose thumbnail is kept (GET .../inputs/{id}/thumbnail).")
    memory_ids: list[str] = Field(default_factory=list, description="Episodic and resource memories made from them.")
    text: str = Field(default="", description=f"The text read, lines deduplicated, at most {GROUP_TEXT_CHARS} chars.")
    text_from: list[TextFrom] = Field(default_factory=list,
                                      description="Where the text came from: the input log, the memories, or both.")
    text_truncated: bool = False


def group_frames(frames: Iterable[ScreenFrame], gap: timedelta = SCREEN_GAP) -> list[list[ScreenFrame]]:
    """Frames in capture order, split where the app or window changes or more than `gap` passes."""
    groups: list[list[ScreenFrame]] = []
    for frame in sorted(frames, key=lambda f: (f.at, f.input_id)):
        if groups:
            last = groups[-1][-1]
            if (last.app, last.window_title) == (frame.app, frame.window_title) and frame.at - last.at <= gap:
                groups[-1].append(frame)
                continue
        groups.append([frame])
    return groups


def unique_lines(texts: Iterable[str], *, contained: bool = False) -> list[str]:
    """The non-empty lines of `texts`, whitespace collapsed, each once, in first-seen order (the "…"
    that marks a skipped stretch in a screen episode's details is not a line read). `contained`:
    a line that an earlier kept line already holds is dropped too (an episode's summary runs the
    lines of its details together)."""
    seen: dict[str, None] = {}
    for text in texts:
        for line in text.splitlines():
            flat = " ".join(line.split())
            if not flat or flat == ELLIPSIS or flat in seen:
                continue
            if contained and any(flat in earlier for earlier in seen):
                continue
            seen[flat] = None
    return list(seen)


def cut_lines(lines: Sequence[str], limit: int = GROUP_TEXT_CHARS) -> tuple[str, bool]:
    """The lines joined, cut to `limit` characters at a line break (a single over-long first line
    is cut inside, ending with "…"); the second value says whether anything was left out."""
    out: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + (1 if out else 0)
        if used + cost > limit:
            if not out:
                out.append(line[:max(limit - 1, 0)].rstrip() + ELLIPSIS)
            return "\n".join(out), True
        out.append(line)
        used += cost
    return "\n".join(out), False


def _latest_input(memory: Memory) -> str | None:
    """The newest input a memory came from: updates append their inputs to `source_ids`."""
    return next((s for s in reversed(memory.source_ids) if s.startswith(INPUT_PREFIX)), None)


def memory_lines(memories: Sequence[Memory], input_ids: Collection[str]) -> list[str]:
    """What the memories made from a group's frames (`input_ids`) say was on screen: each episode's
    summary and details (an episode is one visit to a window), then the content of a screenshot
    resource whose latest frame is in the group (a window's resource is updated in place, so its
    content is what its newest frame showed, not what an earlier visit did)."""
    texts = [text for m in memories if isinstance(m, EpisodicMemory) for text in (m.summary, m.details)]
    texts += [m.content for m in memories if isinstance(m, ResourceMemory) and _latest_input(m) in input_ids]
    return unique_lines(texts, contained=True)


def build_groups(frames: Iterable[ScreenFrame], made_from: Mapping[str, Sequence[Memory]], *,
                 gap: timedelta = SCREEN_GAP, text_chars: int = GROUP_TEXT_CHARS) -> list[FrameGroup]:
    """Frame groups, oldest first. `made_from` maps an input id to the memories whose `source_ids`
    name it; the text is the frames' own where the input log keeps it, then the memories'."""
    groups = []
    for members in group_frames(frames, gap):
        memories: dict[str, Memory] = {}
        for frame in members:
            for memory in made_from.get(frame.input_id, ()):
                memories.setdefault(memory.id, memory)
        ordered = sorted(memories.values(), key=lambda m: (m.occurred_at or m.created_at, m.id))
        kept = [f.text for f in members if f.text]
        compacted = len(kept) < len(members)
        lines = unique_lines(kept)
        text_from: list[TextFrom] = ["input_log"] if kept else []
        if compacted:
            from_memories = memory_lines(ordered, {f.input_id for f in members})
            if from_memories:
                text_from.append("memories")
                lines = unique_lines([*lines, *from_memories])
        text, truncated = cut_lines(lines, text_chars)
        first = members[0]
        groups.append(FrameGroup(
            app=first.app, window_title=first.window_title, first_at=first.at, last_at=members[-1].at,
            frames=len(members), input_ids=[f.input_id for f in members],
            thumbnail_ids=[f.input_id for f in members if f.thumbnail], memory_ids=[m.id for m in ordered],
            text=text, text_from=text_from, text_truncated=truncated,
        ))
    return groups
