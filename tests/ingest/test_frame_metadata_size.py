"""A PNG whose metadata chunks are past Pillow's limits is refused for the size of its metadata, not
called corrupt: 72 MB of text chunks read "corrupt image header (Too much memory used in text chunks…)"."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image, PngImagePlugin

from mirix_py.ingest.frames import InvalidImage, load_frame, probe_frame


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(**text: str) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in text.items():
        info.add_text(key, value)
    buf = io.BytesIO()
    Image.new("RGB", (64, 32), (240, 240, 240)).save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def _with_chunk_after_header(png: bytes, kind: bytes, data: bytes) -> bytes:
    header_end = 8 + 25  # the signature, then IHDR's length, type, 13 bytes and CRC
    return png[:header_end] + _chunk(kind, data) + png[header_end:]


def _refused_for_metadata(data: bytes, tmp_path) -> None:
    path = tmp_path / "shot.png"
    path.write_bytes(data)
    for read in (lambda: load_frame(data), lambda: load_frame(path), lambda: probe_frame(path)):
        with pytest.raises(InvalidImage, match="refused for the size of its metadata") as caught:
            read()
        assert "corrupt" not in str(caught.value)


def test_text_chunks_over_pillows_total_are_refused_for_their_size(tmp_path, monkeypatch):
    monkeypatch.setattr(PngImagePlugin, "MAX_TEXT_MEMORY", 4_000)  # 64 MiB by default: the same check, smaller
    _refused_for_metadata(_png(**{f"note{i}": "x" * 1_000 for i in range(5)}), tmp_path)


@pytest.mark.parametrize("kind,head", [(b"zTXt", b"Comment\x00\x00"), (b"iCCP", b"icc\x00\x00")])
def test_a_compressed_chunk_over_pillows_limit_is_refused_for_its_size(tmp_path, kind, head):
    bomb = head + zlib.compress(b"\x00" * (PngImagePlugin.MAX_TEXT_CHUNK + 1), 9)
    _refused_for_metadata(_with_chunk_after_header(_png(), kind, bomb), tmp_path)

