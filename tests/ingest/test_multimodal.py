"""Frames as autogen messages: downscaled images with OCR text for vision models, text alone otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import pytest
from autogen_agentchat.messages import MultiModalMessage, TextMessage
from autogen_core import Image as AGImage
from autogen_core.models import UserMessage
from PIL import Image

from mirix_py.ingest.multimodal import (
    downscale_for_vision, frame_parts, model_supports_vision, screenshot_agent_message,
    screenshot_user_message,
)

WHEN = datetime(2024, 6, 3, 9, 14, 5, tzinfo=timezone.utc)


@dataclass
class Frame:
    captured_at: datetime
    app: str | None
    window_title: str | None
    text: str
    vision_image: Image.Image | None


def _frames():
    return [Frame(WHEN, "Slack", "#team", "Priya: demo moved to Friday", Image.new("RGB", (1920, 1080), "white")),
            Frame(WHEN, "Calendar", None, "15:00 Dentist", Image.new("RGB", (3840, 2160), "white"))]


def test_downscale_keeps_aspect_and_never_upscales():
    assert downscale_for_vision(Image.new("RGB", (1920, 1080))).size == (1280, 720)
    assert downscale_for_vision(Image.new("RGB", (1080, 1920)), 640).size == (360, 640)
    small = Image.new("L", (300, 200))
    out = downscale_for_vision(small)
    assert out.size == (300, 200) and out.mode == "RGB"
    with pytest.raises(ValueError):
        downscale_for_vision(small, 10)


def test_frame_parts_with_and_without_vision():
    image = Image.new("RGB", (1920, 1080), "white")
    parts = frame_parts(image, "hello", captured_at=WHEN, app="Slack", window_title="#team", vision=True)
    assert isinstance(parts[0], str) and "Slack — #team" in parts[0] and "2024-06-03T09:14:05" in parts[0]
    assert "hello" in parts[0] and isinstance(parts[1], AGImage) and parts[1].image.size == (1280, 720)
    assert frame_parts(image, "hello", captured_at=WHEN, vision=False) == [parts[0].replace("Slack — #team", "screen")]
    assert "(no text recognised)" in frame_parts(None, " ", captured_at=WHEN, vision=True)[0]
    long = frame_parts(None, "x" * 10_000, captured_at=WHEN, vision=False, text_limit=100)[0]
    assert len(long) < 200 and long.endswith("…")


def test_user_message_for_vision_and_text_models():
    vision = screenshot_user_message(_frames(), vision=True, instructions="Update memory from these screens.")
    assert isinstance(vision, UserMessage) and vision.source == "screenshots"
    kinds = [type(p).__name__ for p in vision.content]
    assert kinds == ["str", "str", "Image", "str", "Image"]
    assert max(vision.content[4].image.size) == 1280
    text = screenshot_user_message(_frames(), vision=False)
    assert isinstance(text.content, str) and "Priya: demo moved" in text.content and "15:00 Dentist" in text.content
    with pytest.raises(ValueError):
        screenshot_user_message([], vision=True)


def test_agentchat_messages():
    assert isinstance(screenshot_agent_message(_frames(), vision=True), MultiModalMessage)
    msg = screenshot_agent_message(_frames(), vision=False, source="screen")
    assert isinstance(msg, TextMessage) and msg.source == "screen"


def test_vision_capability_comes_from_model_info():
    class Client:
        def __init__(self, vision):
            self.model_info = {"vision": vision, "function_calling": True, "json_output": True, "family": "x"}

    assert model_supports_vision(Client(True)) and not model_supports_vision(Client(False))
    assert not model_supports_vision(object())

