"""Screenshots as model input: downscaled frames with their OCR text as autogen messages.

With a vision-capable model (`model_info["vision"]`), each frame goes as a text part (app,
window, time, OCR text) followed by the downscaled image; without one, the text parts alone.
`screenshot_user_message` builds an autogen-core `UserMessage` for a `ChatCompletionClient`;
`screenshot_agent_message` builds an autogen-agentchat `MultiModalMessage` (or `TextMessage`)
for agents. autogen is imported lazily: this module loads without the `llm` extra.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, Sequence

from PIL import Image

__all__ = [
    "FrameLike", "downscale_for_vision", "frame_header", "frame_parts", "model_supports_vision",
    "screenshot_agent_message", "screenshot_user_message",
]

VISION_MAX_SIDE = 1280  # long side; OpenAI-style "high detail" cuts images into 512 px tiles
TEXT_LIMIT = 6000  # characters of OCR text per frame in a prompt


class FrameLike(Protocol):
    """What a frame needs to become model input (ProcessedFrame fits)."""

    captured_at: datetime
    app: str | None
    window_title: str | None

    @property
    def text(self) -> str: ...

    @property
    def vision_image(self) -> Image.Image | None: ...


def downscale_for_vision(image: Image.Image, max_side: int = VISION_MAX_SIDE) -> Image.Image:
    """RGB copy whose long side is at most `max_side` (never upscaled)."""
    if max_side < 64:
        raise ValueError("max_side must be at least 64 pixels")
    rgb = image.convert("RGB") if image.mode != "RGB" else image
    w, h = rgb.size
    factor = max_side / max(w, h)
    if factor >= 1:
        return rgb.copy()
    return rgb.resize((max(1, round(w * factor)), max(1, round(h * factor))), Image.Resampling.LANCZOS)


def frame_header(captured_at: datetime, app: str | None, window_title: str | None) -> str:
    where = " — ".join(x for x in (app, window_title) if x) or "screen"
    return f"Screenshot of {where} at {captured_at.isoformat(timespec='seconds')}"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def frame_parts(image: Image.Image | None, ocr_text: str, *, captured_at: datetime, app: str | None = None,
                window_title: str | None = None, vision: bool, max_side: int = VISION_MAX_SIDE,
                text_limit: int = TEXT_LIMIT) -> list[Any]:
    """Content parts for one frame: [header + OCR text] and, with vision and an image, an autogen Image."""
    header = frame_header(captured_at, app, window_title)
    body = _clip(ocr_text, text_limit) if ocr_text and ocr_text.strip() else "(no text recognised)"
    parts: list[Any] = [f"{header}\nOCR text:\n{body}"]
    if vision and image is not None:
        from autogen_core import Image as AGImage

        parts.append(AGImage.from_pil(downscale_for_vision(image, max_side)))
    return parts


def _all_parts(frames: Sequence[FrameLike], vision: bool, max_side: int, text_limit: int) -> list[Any]:
    if not frames:
        raise ValueError("no frames to describe")
    parts: list[Any] = []
    for frame in frames:
        parts.extend(frame_parts(frame.vision_image, frame.text, captured_at=frame.captured_at, app=frame.app,
                                 window_title=frame.window_title, vision=vision, max_side=max_side,
                                 text_limit=text_limit))
    return parts


def _content(frames: Sequence[FrameLike], vision: bool, instructions: str | None, max_side: int,
             text_limit: int) -> str | list[Any]:
    """A message's content: str/Image parts with vision, the parts joined into one str without."""
    parts = _all_parts(frames, vision, max_side, text_limit)
    if instructions:
        parts.insert(0, instructions)
    return parts if vision else "\n\n".join(parts)


def screenshot_user_message(frames: Sequence[FrameLike], *, vision: bool, source: str = "screenshots",
                            instructions: str | None = None, max_side: int = VISION_MAX_SIDE,
                            text_limit: int = TEXT_LIMIT):
    """An autogen-core `UserMessage`: a list of str/Image parts with vision, one str without."""
    from autogen_core.models import UserMessage

    return UserMessage(content=_content(frames, vision, instructions, max_side, text_limit), source=source)


def screenshot_agent_message(frames: Sequence[FrameLike], *, vision: bool, source: str = "screenshots",
                             instructions: str | None = None, max_side: int = VISION_MAX_SIDE,
                             text_limit: int = TEXT_LIMIT):
    """An autogen-agentchat `MultiModalMessage` with vision, a `TextMessage` without."""
    from autogen_agentchat.messages import MultiModalMessage, TextMessage

    content = _content(frames, vision, instructions, max_side, text_limit)
    if isinstance(content, str):  # without vision: the parts joined into one text
        return TextMessage(content=content, source=source)
    return MultiModalMessage(content=content, source=source)


def model_supports_vision(client: Any) -> bool:
    """True when an autogen ChatCompletionClient says its model takes images."""
    info = getattr(client, "model_info", None)
    if info is None:
        return False
    try:
        return bool(info["vision"])
    except (KeyError, TypeError):
        return bool(getattr(info, "vision", False))
