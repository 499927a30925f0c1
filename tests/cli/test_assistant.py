"""`Assistant`: capture into memory and serve the viewer, REST and MCP from one process over one
engine; a frame captured is found through REST at once. Without a display nothing is served."""

from __future__ import annotations

import time

import httpx
import pytest
from PIL import Image, ImageDraw, ImageFont

from mirix_py.cli.assistant import Assistant
from mirix_py.engine import Mirix
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.ingest.capture import CaptureUnavailable, GrabbedFrame, ReplaySource


def _screen(text: str) -> Image.Image:
    from mirix_synth.screens import find_font

    path = find_font()
    font = ImageFont.truetype(str(path), 34) if path else ImageFont.load_default(34)
    image = Image.new("RGB", (1280, 720), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(text.splitlines()):
        draw.text((60, 80 + i * 60), line, fill="black", font=font)
    return image


@pytest.fixture
def served(tmp_path, embedder):
    from mirix_py.server import create_app

    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        mx.configure_screenshots(batch=BatchPolicy(max_seconds=1.0))  # an update a second, not a minute
        yield mx, create_app(mx, auth=False, mcp=True)


def _wait_for(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("state not reached")


def test_a_captured_frame_is_searchable_over_rest_from_the_same_process(served):
    mx, app = served
    frame = GrabbedFrame(_screen("Grocery list for Saturday\nbuy persimmons and oat milk"), app="Notes",
                         window_title="Groceries")
    source = ReplaySource([frame])
    with Assistant(mx, source, "ada", app, port=0, interval=0.2) as running:
        assert running.url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=running.url, timeout=30) as http:
            assert http.get("/viewer").status_code == 200
            assert http.get("/docs").status_code == 200
            assert http.get("/mcp/").status_code != 404  # MCP is mounted on the same server

            def found():
                hits = http.post("/v1/users/ada/search", json={"query": "persimmons"}).json()
                return [h for h in hits if "persimmons" in h["text"].lower()]

            hits = _wait_for(found)
            assert hits[0]["memory"]["memory_type"] in ("resource", "episodic")
    assert running.stats is not None and running.stats.grabbed == 1


def test_without_a_display_nothing_is_served(served):
    mx, app = served

    class NoDisplay:
        def check(self):
            raise CaptureUnavailable("no display to capture")

        def grab(self):  # pragma: no cover - never reached
            raise AssertionError("grabbed without a display")

    assistant = Assistant(mx, NoDisplay(), "ada", app, port=0)
    with pytest.raises(CaptureUnavailable, match="no display"):
        assistant.start()
    assert assistant.url == "" and assistant._server is None


def test_cli_says_why_without_a_display(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mirix_py.cli.commands import app

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = CliRunner().invoke(app, ["assistant", "-u", "ada", "-d", str(tmp_path), "--port", "0"])
    assert out.exit_code == 2 and "no display to capture" in out.output
