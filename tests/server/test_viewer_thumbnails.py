"""Screen activity in the viewer's Inputs tab: a screenshot input shows its app, window, time and,
when thumbnails are kept, the thumbnail (fetched with the key: GET .../inputs/{id}/thumbnail)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from test_viewer import _click, _connect, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

from mirix_py.ingest.screenshots import kept_thumbnail, user_thumbnail_dir


def _screen(text: str):
    from mirix_synth.screens import _font
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (900, 240), "white")
    ImageDraw.Draw(image).rectangle((0, 0, 900, 40), fill=(40, 90, 160))
    ImageDraw.Draw(image).text((20, 100), text, fill="black", font=_font(36))
    return image


def test_thumbnail_route_and_the_inputs_tab(browser, live_sqlite, tmp_path):  # noqa: F811
    from PIL import Image
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.configure_screenshots(keep_thumbnails=True)
    shot = mx.add_screenshot(_screen("Trip notes: ferry to Bergen at 9:40"), user_id="alice",
                             captured_at=datetime.now(timezone.utc), app="Firefox", window_title="Trip notes",
                             wait=True)
    text = mx.add("I keep bees on the roof of the garage.", user_id="alice")
    input_id = shot.input_ids[0]

    c = live_sqlite.client(live_sqlite.alice)
    r = c.get(f"/v1/users/alice/inputs/{input_id}/thumbnail")
    assert r.status_code == 200 and r.headers["content-type"] == "image/webp"
    assert Image.open(io.BytesIO(r.content)).size[0] <= 320  # the small copy, never the frame
    assert c.get(f"/v1/users/alice/inputs/{text.input_ids[0]}/thumbnail").status_code == 404  # none kept
    assert live_sqlite.client(live_sqlite.bob).get(f"/v1/users/alice/inputs/{input_id}/thumbnail").status_code == 403
    assert live_sqlite.client(live_sqlite.bob).get(f"/v1/users/bob/inputs/{input_id}/thumbnail").status_code == 404

    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    _click(d, By.ID, "tab-inputs")
    shown = f'#input-list .input[data-id="{input_id}"]'
    _wait(d, lambda d: d.execute_script(
        "const img = document.querySelector(arguments[0] + ' img.thumb.loaded');"
        "return !!img && img.naturalWidth > 0 && !img.hidden", shown))
    row = d.execute_script("return document.querySelector(arguments[0]).innerText", shown)
    assert "Firefox · Trip notes" in row and "screenshot" in row
    assert not d.execute_script("return document.querySelector("
                                f"'#input-list .input[data-id=\"{text.input_ids[0]}\"] img.thumb')")  # text: none
    (tmp_path / "viewer-inputs-thumbnail.png").write_bytes(d.get_screenshot_as_png())

    # expired (purged) thumbnails leave the entry without an image, not broken
    for f in user_thumbnail_dir(mx.settings.data_dir / "thumbnails", "alice").rglob("*.webp"):
        f.unlink()
    assert c.get(f"/v1/users/alice/inputs/{input_id}/thumbnail").status_code == 404


def test_kept_thumbnail_stays_inside_the_users_folder(tmp_path):
    own = user_thumbnail_dir(tmp_path, "alice") / "2026-01-01"
    own.mkdir(parents=True)
    (own / "a.webp").write_bytes(b"RIFF")
    other = user_thumbnail_dir(tmp_path, "bob")
    other.mkdir()
    (other / "b.webp").write_bytes(b"RIFF")
    rel = own.relative_to(tmp_path) / "a.webp"
    assert kept_thumbnail(tmp_path, "alice", str(rel)) == (own / "a.webp").resolve()
    assert kept_thumbnail(tmp_path, "bob", str(rel)) is None  # alice's file, asked for as bob
    assert kept_thumbnail(tmp_path, "alice", f"{rel.parts[0]}/../{other.name}/b.webp") is None
    assert kept_thumbnail(tmp_path, "alice", None) is None
    assert kept_thumbnail(tmp_path, "alice", str(rel).replace(".webp", ".png")) is None
