"""Loading frames: every kind of bad input is refused with a reason; times and apps are read from files."""

from __future__ import annotations

import io
import os
import struct
import zlib
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from PIL import Image, ImageFile, PngImagePlugin

from mirix_py.errors import InvalidInput
from mirix_py.ingest.frames import (
    InvalidImage, frame_info_from_file, list_image_files, load_frame, png_size, probe_frame, timestamp_from_name,
)


def _png(image: Image.Image, **info: str) -> bytes:
    meta = PngImagePlugin.PngInfo()
    for k, v in info.items():
        meta.add_text(k, v)
    buf = io.BytesIO()
    image.save(buf, format="PNG", pnginfo=meta)
    return buf.getvalue()


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims a size in its header and holds (almost) no pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b"")


@pytest.fixture
def screen():
    return Image.new("RGB", (1280, 720), (240, 240, 240))


def test_pil_path_bytes_and_file_objects_load(tmp_path, screen):
    data = _png(screen)
    path = tmp_path / "a.png"
    path.write_bytes(data)
    for source in (screen, path, str(path), data, bytearray(data), memoryview(data), io.BytesIO(data)):
        frame = load_frame(source)
        assert frame.image.size == (1280, 720) and frame.image.mode == "RGB"
    assert load_frame(path).png_bytes == len(data) == load_frame(path).encoded_bytes
    assert load_frame(screen).format is None and png_size(load_frame(screen)) > 0


def test_alpha_and_palette_images_become_rgb_on_white():
    rgba = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    assert load_frame(rgba).image.getpixel((5, 5)) == (255, 255, 255)
    assert load_frame(Image.new("P", (64, 64))).image.mode == "RGB"
    assert load_frame(Image.new("I;16", (64, 64))).image.mode == "RGB"


def test_jpeg_and_webp_are_accepted(screen):
    for fmt in ("JPEG", "WEBP", "BMP"):
        buf = io.BytesIO()
        screen.save(buf, format=fmt)
        assert load_frame(buf.getvalue()).format == fmt


BAD = {
    "empty bytes": (b"", "0 bytes"),
    "text file": (b"hello, this is not an image at all", "not an image"),
    "corrupt header": (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not an image"),
    "absurd size": (_png_header_only(20000, 20000), "larger than any screen"),
    "over the megapixel limit": (_png_header_only(9000, 9000), "larger than any screen"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_bytes_are_refused_with_a_reason(case):
    data, reason = BAD[case]
    with pytest.raises(InvalidImage, match=reason):
        load_frame(data)


def test_truncated_png_is_refused(screen):
    image = Image.effect_noise((800, 600), 60).convert("RGB")  # noisy, so the data is long
    data = _png(image)
    with pytest.raises(InvalidImage, match="truncated|corrupt"):
        load_frame(data[: len(data) // 2])


def test_truncated_jpeg_is_refused():
    buf = io.BytesIO()
    Image.effect_noise((800, 600), 60).convert("RGB").save(buf, format="JPEG")
    with pytest.raises(InvalidImage, match="truncated|corrupt"):
        load_frame(buf.getvalue()[:3000])


def test_truncated_is_refused_even_if_someone_allowed_truncated_images(monkeypatch):
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    with pytest.raises(InvalidImage, match="LOAD_TRUNCATED_IMAGES"):
        load_frame(_png(Image.new("RGB", (64, 64))))


def test_zero_size_and_tiny_images_are_refused():
    with pytest.raises(InvalidImage, match="empty"):
        load_frame(Image.new("RGB", (0, 0)))
    with pytest.raises(InvalidImage, match="too small"):
        load_frame(Image.new("RGB", (4, 4)))


def test_unsupported_formats_are_named():
    buf = io.BytesIO()
    Image.new("RGB", (32, 32)).save(buf, format="ICO")
    with pytest.raises(InvalidImage, match="ICO images are not supported"):
        load_frame(buf.getvalue())
    with pytest.raises(InvalidImage, match="not an image"):
        load_frame(b"<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>")


def test_missing_empty_and_directory_paths(tmp_path):
    with pytest.raises(InvalidImage, match="no such file"):
        load_frame(tmp_path / "nope.png")
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(InvalidImage, match="empty"):
        load_frame(tmp_path / "empty.png")
    with pytest.raises(InvalidImage, match="not a file"):
        load_frame(tmp_path)
    with pytest.raises(InvalidImage, match="PIL image, a path or bytes"):
        load_frame(12345)  # type: ignore[arg-type]
    assert issubclass(InvalidImage, InvalidInput)


def test_probe_reads_headers_without_pixels(tmp_path):
    (tmp_path / "big.png").write_bytes(_png_header_only(20000, 20000))
    with pytest.raises(InvalidImage, match="larger than any screen"):
        probe_frame(tmp_path / "big.png")
    (tmp_path / "ok.png").write_bytes(_png(Image.new("RGB", (64, 64)), **{"mirix:app": "Slack"}))
    assert probe_frame(tmp_path / "ok.png")["mirix:app"] == "Slack"


UTC = timezone.utc


@pytest.mark.parametrize("name,expected", [
    ("screenshot_2024-06-03T09-14-05.123Z.png", datetime(2024, 6, 3, 9, 14, 5, 123000, tzinfo=UTC)),
    ("2024-06-03_09-14-05+02:00.png", datetime(2024, 6, 3, 9, 14, 5, tzinfo=timezone(timedelta(hours=2)))),
    ("Screenshot 2024-06-03 at 9.14.05 PM.png", datetime(2024, 6, 3, 21, 14, 5, tzinfo=UTC)),
    ("Screenshot_20240603-091405.png", datetime(2024, 6, 3, 9, 14, 5, tzinfo=UTC)),
    ("frame_1717406045123.png", datetime(2024, 6, 3, 9, 14, 5, 123000, tzinfo=UTC)),
    ("1717406045.png", datetime(2024, 6, 3, 9, 14, 5, tzinfo=UTC)),
])
def test_timestamps_from_file_names(name, expected):
    assert timestamp_from_name(name, default_tz=UTC) == expected


JUNE, DECEMBER = datetime(2024, 6, 3, 15, 14, 5), datetime(2024, 12, 15, 16, 10)
NAMES = {"Screenshot 2024-06-03 at 3.14.05 PM.png": JUNE, "Screenshot_20241215-161000.png": DECEMBER}


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/Los_Angeles"])
def test_a_stamp_without_a_zone_gets_the_offset_its_date_had_in_the_machines_zone(machine_zone, zone):
    """A June name read in December (or a December one in June) keeps the offset of its own date."""
    machine_zone(zone)
    for name, naive in NAMES.items():
        got = timestamp_from_name(name)
        expected = naive.replace(tzinfo=ZoneInfo(zone))
        assert got is not None and (got, got.utcoffset()) == (expected, expected.utcoffset()), name


def test_a_zone_given_reads_zoneless_stamps_with_that_dates_offset_whatever_the_machines(tmp_path, machine_zone):
    machine_zone("America/Los_Angeles")
    berlin = ZoneInfo("Europe/Berlin")
    for name, naive in NAMES.items():
        path = tmp_path / name
        path.write_bytes(_png(Image.new("RGB", (64, 64))))
        got = frame_info_from_file(path, probe_frame(path), default_tz=berlin).captured_at
        assert got.utcoffset() == naive.replace(tzinfo=berlin).utcoffset() and got == naive.replace(tzinfo=berlin)


def test_metadata_and_exif_times_without_a_zone_get_their_dates_offset(tmp_path, machine_zone):
    machine_zone("Europe/Berlin")
    meta = tmp_path / "a.png"
    meta.write_bytes(_png(Image.new("RGB", (64, 64)), **{"Creation Time": "2024-06-03 15:14:05"}))
    exif = Image.Exif()
    exif.get_ifd(0x8769)[0x9003] = "2024:12:15 16:10:00"
    shot = tmp_path / "b.jpg"
    Image.new("RGB", (64, 64)).save(shot, format="JPEG", exif=exif)
    for path, naive in ((meta, JUNE), (shot, DECEMBER)):
        got = frame_info_from_file(path, probe_frame(path)).captured_at
        assert got.utcoffset() == naive.replace(tzinfo=ZoneInfo("Europe/Berlin")).utcoffset(), path.name


def test_names_without_a_time_give_none():
    assert timestamp_from_name("holiday.png") is None
    assert timestamp_from_name("report-2024.png") is None


def test_frame_info_prefers_metadata_then_exif_then_name_then_mtime(tmp_path):
    meta = tmp_path / "screenshot_2020-01-01T00-00-00Z.png"
    meta.write_bytes(_png(Image.new("RGB", (64, 64)), **{"mirix:captured_at": "2024-06-03T09:00:00+00:00",
                                                          "mirix:app": "Slack", "mirix:window_title": "#team"}))
    info = frame_info_from_file(meta, probe_frame(meta))
    assert (info.captured_at, info.time_source, info.app, info.window_title) == (
        datetime(2024, 6, 3, 9, tzinfo=UTC), "metadata", "Slack", "#team")

    exif = Image.Exif()
    exif.get_ifd(0x8769)[0x9003] = "2024:06:03 10:11:12"
    exif.get_ifd(0x8769)[0x9011] = "+02:00"
    shot = tmp_path / "IMG.jpg"
    Image.new("RGB", (64, 64)).save(shot, format="JPEG", exif=exif)
    info = frame_info_from_file(shot, probe_frame(shot))
    assert info.time_source == "exif" and info.captured_at == datetime(2024, 6, 3, 8, 11, 12, tzinfo=UTC)

    named = tmp_path / "screenshot_2024-06-03T09-14-05Z.png"
    named.write_bytes(_png(Image.new("RGB", (64, 64))))
    assert frame_info_from_file(named, probe_frame(named)).time_source == "name"

    plain = tmp_path / "plain.png"
    plain.write_bytes(_png(Image.new("RGB", (64, 64))))
    os.utime(plain, (1717405200, 1717405200))
    info = frame_info_from_file(plain, probe_frame(plain))
    assert info.time_source == "mtime" and info.captured_at == datetime(2024, 6, 3, 9, 0, tzinfo=UTC)


def test_list_image_files(tmp_path):
    for name in ("b.png", "a.JPG", "notes.txt", "sub/c.webp"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    assert [p.name for p in list_image_files(tmp_path)] == ["a.JPG", "b.png"]
    assert [p.name for p in list_image_files(tmp_path, recursive=True)] == ["a.JPG", "b.png", "c.webp"]
    with pytest.raises(InvalidInput):
        list_image_files(tmp_path / "b.png")


def test_pixel_digest_ignores_png_metadata_but_not_pixels():
    from mirix_py.ingest.frames import pixel_digest

    a = Image.new("RGB", (64, 64), "white")
    b = a.copy()
    b.putpixel((10, 10), (0, 0, 0))
    assert pixel_digest(_png(a, **{"mirix:captured_at": "1"})) == pixel_digest(_png(a, **{"mirix:captured_at": "2"}))
    assert pixel_digest(_png(a)) != pixel_digest(_png(b))
    assert pixel_digest(b"not a png") != pixel_digest(b"not a png either")
