"""Loading and validating screenshot frames, and reading when and where they were taken.

`load_frame` accepts a PIL image, a path or encoded bytes and returns an RGB image or raises
`InvalidImage` (a subclass of `InvalidInput`) that says what is wrong: empty or missing file, not
an image, a format we do not take, corrupt or truncated data, a zero-size or absurdly large
picture. The size is checked from the header, before any pixel is decoded, so a 20000x20000
"decompression bomb" costs nothing.

`frame_info_from_file` finds the capture time (PNG text chunks, EXIF, then the file name, then
the file's modification time) and, where a capture tool wrote them, the app and window title.
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import IO, Any, Union

from PIL import Image, ImageFile, PngImagePlugin, UnidentifiedImageError

from mirix_py.errors import InvalidInput

__all__ = [
    "FrameInfo", "ImageSource", "InvalidImage", "LoadedFrame", "MAX_PIXELS", "MAX_SIDE", "MIN_SIDE",
    "SUPPORTED_FORMATS", "frame_info_from_file", "list_image_files", "load_frame", "pixel_digest", "png_size",
    "local_time", "probe_frame", "timestamp_from_name",
]

ImageSource = Union[Image.Image, str, Path, bytes, bytearray, memoryview, IO[bytes]]

# 8K (7680x4320) is 33 Mpx; three 4K monitors side by side are 11520x2160. Beyond these it is not a screen.
MAX_SIDE = 16384
MAX_PIXELS = 50_000_000
MIN_SIDE = 8
MAX_FILE_BYTES = 200 * 1024 * 1024
SUPPORTED_FORMATS = frozenset({"PNG", "JPEG", "WEBP", "BMP", "TIFF", "GIF", "PPM"})
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif", ".ppm", ".pgm"})


class InvalidImage(InvalidInput):
    """A frame that cannot be used; nothing was written for it."""


@dataclass
class LoadedFrame:
    """A decoded, validated frame (RGB) and what is known about its encoding."""

    image: Image.Image
    format: str | None  # PNG, JPEG, ... ; None for an in-memory PIL image
    name: str  # file name, "<bytes>" or "<image>"
    encoded_bytes: int | None  # size of the file / bytes as given
    png_bytes: int | None = None  # size as PNG: exact for PNG input, else filled in on demand
    text: dict[str, str] | None = None  # PNG text chunks, if any

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size


def _describe(source: Any) -> str:
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, Image.Image):
        return "<image>"
    return "<bytes>"


def _check_size(width: int, height: int, where: str) -> None:
    if width <= 0 or height <= 0:
        raise InvalidImage(f"{where}: image is empty ({width}x{height} pixels)")
    if width < MIN_SIDE or height < MIN_SIDE:
        raise InvalidImage(f"{where}: image is {width}x{height} pixels, too small to be a screenshot "
                           f"(at least {MIN_SIDE}x{MIN_SIDE})")
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise InvalidImage(f"{where}: image is {width}x{height} pixels, larger than any screen "
                           f"(limit {MAX_SIDE} pixels a side and {MAX_PIXELS // 1_000_000} megapixels)")


# what Pillow's PNG reader raises for metadata chunks past its limits (PngImagePlugin.MAX_TEXT_CHUNK, 1 MiB a
# decompressed text chunk or colour profile, and MAX_TEXT_MEMORY, 64 MiB of text in all): a sound image can carry them
_PNG_METADATA_LIMITS = ("Too much memory used in text chunks", "Decompressed data too large")


def _header_error(where: str, exc: Exception) -> InvalidImage:
    """What is wrong with an image whose header Pillow refused: its metadata's size, or a corrupt header."""
    if isinstance(exc, ValueError) and str(exc).startswith(_PNG_METADATA_LIMITS):
        chunk, total = PngImagePlugin.MAX_TEXT_CHUNK / 2**20, PngImagePlugin.MAX_TEXT_MEMORY / 2**20
        return InvalidImage(f"{where}: image refused for the size of its metadata: its PNG text chunks or colour "
                            f"profile are over Pillow's limits ({chunk:g} MiB a chunk decompressed, {total:g} MiB "
                            f"of text in all; {exc})")
    return InvalidImage(f"{where}: corrupt image header ({exc})")


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, (0, 0), rgba.getchannel("A"))
        return background
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        return image.point(lambda v: v / 256).convert("L").convert("RGB")
    return image.convert("RGB")


def load_frame(source: ImageSource, *, name: str | None = None) -> LoadedFrame:
    """Decode and validate one frame. Raises InvalidImage with the reason; never returns a partial image."""
    where = name or _describe(source)
    if isinstance(source, Image.Image):
        _check_size(source.width, source.height, where)
        try:
            source.load()
            image = _to_rgb(source)
        except (OSError, ValueError, SyntaxError) as exc:
            raise InvalidImage(f"{where}: the image cannot be read ({exc})") from exc
        return LoadedFrame(image=image, format=None, name=where, encoded_bytes=None)

    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise InvalidImage(f"{where}: no such file")
        if not path.is_file():
            raise InvalidImage(f"{where}: not a file")
        size = path.stat().st_size
        if size == 0:
            raise InvalidImage(f"{where}: file is empty (0 bytes)")
        if size > MAX_FILE_BYTES:
            raise InvalidImage(f"{where}: file is {size / 2**20:.0f} MiB, over the {MAX_FILE_BYTES // 2**20} MiB limit")
        data = path.read_bytes()
        where = name or path.name
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read(MAX_FILE_BYTES + 1)
        if not isinstance(data, (bytes, bytearray)):
            raise InvalidImage(f"{where}: file object returned text; open it in binary mode")
        data = bytes(data)
    elif source is None:
        raise InvalidImage("image is required (a PIL image, a path or bytes)")
    else:
        raise InvalidImage(f"image must be a PIL image, a path or bytes, not {type(source).__name__}")

    if not data:
        raise InvalidImage(f"{where}: no data (0 bytes)")
    if len(data) > MAX_FILE_BYTES:
        raise InvalidImage(f"{where}: over the {MAX_FILE_BYTES // 2**20} MiB limit")
    return _decode(data, where)


def _decode(data: bytes, where: str) -> LoadedFrame:
    supported = ", ".join(sorted(SUPPORTED_FORMATS))
    if ImageFile.LOAD_TRUNCATED_IMAGES:  # someone else's global; a truncated frame must still fail here
        raise InvalidImage("PIL.ImageFile.LOAD_TRUNCATED_IMAGES is set; refusing to read frames that may be truncated")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InvalidImage(f"{where}: image is larger than any screen ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise InvalidImage(f"{where}: not an image, or a format Pillow cannot read "
                           f"(supported: {supported})") from exc
    except (OSError, ValueError, SyntaxError) as exc:
        raise _header_error(where, exc) from exc
    fmt = (image.format or "").upper()
    if fmt not in SUPPORTED_FORMATS:
        raise InvalidImage(f"{where}: {fmt or 'unknown'} images are not supported (supported: {supported})")
    _check_size(image.width, image.height, where)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image.load()
            rgb = _to_rgb(image)
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise InvalidImage(f"{where}: corrupt or truncated image data ({exc})") from exc
    except Image.DecompressionBombWarning as exc:  # pragma: no cover - caught by the size check
        raise InvalidImage(f"{where}: image is larger than any screen") from exc
    text = {str(k): str(v) for k, v in getattr(image, "text", {}).items()} if fmt == "PNG" else None
    exif = _exif_times(image)
    if exif:
        text = {**(text or {}), **exif}
    return LoadedFrame(image=rgb, format=fmt, name=where, encoded_bytes=len(data),
                       png_bytes=len(data) if fmt == "PNG" else None, text=text or None)


def probe_frame(path: str | Path) -> dict[str, str]:
    """Check a file's header (format, size) without decoding pixels; return its text metadata.

    PNG text chunks written before the image data and EXIF times are returned; corrupt pixel
    data is only found by `load_frame`.
    """
    path = Path(path)
    where = path.name
    if not path.is_file():
        raise InvalidImage(f"{where}: no such file" if not path.exists() else f"{where}: not a file")
    if path.stat().st_size == 0:
        raise InvalidImage(f"{where}: file is empty (0 bytes)")
    supported = ", ".join(sorted(SUPPORTED_FORMATS))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                fmt = (image.format or "").upper()
                if fmt not in SUPPORTED_FORMATS:
                    raise InvalidImage(f"{where}: {fmt or 'unknown'} images are not supported (supported: {supported})")
                _check_size(image.width, image.height, where)
                text = {str(k): v for k, v in image.info.items() if isinstance(v, str)}
                text.update(_exif_times(image))
                return text
    except InvalidImage:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InvalidImage(f"{where}: image is larger than any screen ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise InvalidImage(f"{where}: not an image, or a format Pillow cannot read (supported: {supported})") from exc
    except (OSError, ValueError, SyntaxError) as exc:
        raise _header_error(where, exc) from exc


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PIXEL_CHUNKS = {b"IHDR", b"PLTE", b"tRNS", b"IDAT"}


def pixel_digest(data: bytes) -> bytes:
    """A digest of what an encoded image shows, without decoding it.

    For PNG only the chunks that carry pixels (IHDR, PLTE, tRNS, IDAT) are hashed, so two frames
    that differ only in metadata (a capture time in a text chunk) share a digest; other formats
    hash the whole file. Equal digests mean identical pixels (for one encoder); different
    digests mean nothing.
    """
    digest = hashlib.blake2b(digest_size=16)
    if not data.startswith(_PNG_SIGNATURE):
        digest.update(data)
        return digest.digest()
    pos = len(_PNG_SIGNATURE)
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind in _PIXEL_CHUNKS:
            digest.update(kind)
            digest.update(data[pos + 8:pos + 8 + length])
        if kind == b"IEND":
            break
        pos += 12 + length
    return digest.digest()


def png_size(frame: LoadedFrame, *, compress_level: int = 6) -> int:
    """Bytes the frame takes as a PNG (exact for PNG input; otherwise encoded once and cached)."""
    if frame.png_bytes is None:
        buf = io.BytesIO()
        frame.image.save(buf, format="PNG", compress_level=compress_level)
        frame.png_bytes = buf.tell()
    return frame.png_bytes


# ---------------------------------------------------------------- when and where


@dataclass(frozen=True)
class FrameInfo:
    captured_at: datetime
    time_source: str  # "metadata" | "exif" | "name" | "mtime"
    app: str | None = None
    window_title: str | None = None


_EXIF_DATETIME_ORIGINAL = 0x9003
_EXIF_OFFSET_ORIGINAL = 0x9011
_EXIF_DATETIME = 0x0132


def _exif_times(image: Image.Image) -> dict[str, str]:
    if image.format == "PNG" and "exif" not in image.info:
        return {}  # Pillow would decode the whole PNG looking for a late eXIf chunk
    try:
        exif = image.getexif()
    except Exception:
        return {}
    out: dict[str, str] = {}
    sub = exif.get_ifd(0x8769) if exif else {}
    value = sub.get(_EXIF_DATETIME_ORIGINAL) or exif.get(_EXIF_DATETIME)
    if value:
        out["exif:datetime"] = str(value)
        offset = sub.get(_EXIF_OFFSET_ORIGINAL)
        if offset:
            out["exif:offset"] = str(offset)
    return out


_NAME_PATTERNS = [
    # 2024-06-03T09-14-05.123Z, 2024-06-03_09.14.05, "2024-06-03 at 09.14.05", 2024-06-03 09:14:05+02:00
    re.compile(r"(?P<y>(?:19|20)\d\d)-(?P<mo>\d\d)-(?P<d>\d\d)(?:[T_ ]|\s+at\s+)"
               r"(?P<h>\d\d)[-.:h](?P<mi>\d\d)[-.:m](?P<s>\d\d)(?:[.,](?P<frac>\d{1,6}))?"
               r"\s*(?P<tz>Z|[+-]\d\d(?::?\d\d)?)?(?:\s*(?P<ampm>[AaPp][Mm]))?"),
    # 20240603_091405, 20240603-091405123, 20240603091405
    re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)(?P<mo>\d\d)(?P<d>\d\d)[-_T]?(?P<h>\d\d)(?P<mi>\d\d)(?P<s>\d\d)"
               r"(?P<frac>\d{3})?(?P<tz>Z)?(?!\d)"),
]
_EPOCH = re.compile(r"(?<![\d.])(?P<n>1[5-9]\d{8}(?:\d{3})?)(?:\.(?P<frac>\d{1,6}))?(?![\d])")


def _offset(text: str) -> tzinfo:
    """The zone a stamp's own suffix gives ("Z", "+02:00", "-0530")."""
    if text == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def local_time(naive: datetime, zone: tzinfo | None) -> datetime:
    """A wall-clock time read in `zone` (None: this machine's zone) with the offset that zone had on
    that date, not today's: a June stamp read in December keeps its summer time."""
    if zone is None:
        return naive.astimezone()  # the C library's rules for that date
    return naive.replace(tzinfo=zone)


def _stamped(naive: datetime, suffix: str | None, default_tz: tzinfo | None) -> datetime:
    """`naive` in the zone its stamp names, else in `default_tz` (`local_time`)."""
    return naive.replace(tzinfo=_offset(suffix)) if suffix else local_time(naive, default_tz)


def timestamp_from_name(name: str, *, default_tz: tzinfo | None = None) -> datetime | None:
    """Capture time written in a file name by common screenshot tools, or None.

    Handles ISO-like stamps (`2024-06-03T09-14-05.123Z`, macOS `Screenshot 2024-06-03 at 9.14.05 PM`),
    compact stamps (Android/Windows `Screenshot_20240603-091405`) and Unix epoch seconds or
    milliseconds. A stamp without a zone is read in `default_tz` (this machine's zone when None), with
    the offset in force on its date (`local_time`).
    """
    stem = Path(name).name
    # macOS writes single-digit hours: "at 9.14.05 PM"
    stem = re.sub(r"(\sat\s)(\d)([.:]\d\d[.:]\d\d)", r"\g<1>0\2\3", stem)
    for pattern in _NAME_PATTERNS:
        m = pattern.search(stem)
        if not m:
            continue
        try:
            hour = int(m["h"])
            ampm = (m.groupdict().get("ampm") or "").lower()
            if ampm == "pm" and hour < 12:
                hour += 12
            elif ampm == "am" and hour == 12:
                hour = 0
            frac = (m["frac"] or "0")[:6].ljust(6, "0")
            naive = datetime(int(m["y"]), int(m["mo"]), int(m["d"]), hour, int(m["mi"]), int(m["s"]), int(frac))
            return _stamped(naive, m["tz"], default_tz)
        except ValueError:
            continue
    m = _EPOCH.search(stem)
    if m:
        n = int(m["n"])
        seconds = n / 1000 if len(m["n"]) == 13 else n + float(f"0.{m['frac']}" if m["frac"] else 0)
        return datetime.fromtimestamp(seconds, tz=timezone.utc)
    return None


def _parse_iso(value: str, default_tz: tzinfo | None) -> datetime | None:
    try:
        from dateutil import parser as date_parser

        when = date_parser.isoparse(value.strip())
    except (ValueError, OverflowError):
        return None
    return when if when.tzinfo else local_time(when, default_tz)


def frame_info_from_file(path: str | Path, text: dict[str, str] | None = None, *,
                         default_tz: tzinfo | None = None) -> FrameInfo:
    """When (and in which app) a screenshot file was taken.

    Order: PNG text chunks written by capture tools (`mirix:captured_at`, `Creation Time`), EXIF
    DateTimeOriginal (+ OffsetTimeOriginal), a stamp in the file name, the file's mtime. A time written
    without a zone is read in `default_tz` (this machine's zone when None) with the offset in force on
    its date.
    """
    path = Path(path)
    text = text or {}
    app = text.get("mirix:app") or None
    window = text.get("mirix:window_title") or None
    for key in ("mirix:captured_at", "Creation Time", "creation_time"):
        if text.get(key):
            when = _parse_iso(text[key], default_tz)
            if when is None and key != "mirix:captured_at":
                try:
                    from dateutil import parser as date_parser

                    when = date_parser.parse(text[key])
                    when = when if when.tzinfo else local_time(when, default_tz)
                except (ValueError, OverflowError):
                    when = None
            if when is not None:
                return FrameInfo(when, "metadata", app, window)
    if text.get("exif:datetime"):
        try:
            naive = datetime.strptime(text["exif:datetime"].strip("\x00 "), "%Y:%m:%d %H:%M:%S")
            offset = text.get("exif:offset", "").strip("\x00 ") or None
            return FrameInfo(_stamped(naive, offset, default_tz), "exif", app, window)
        except ValueError:
            pass
    when = timestamp_from_name(path.name, default_tz=default_tz)
    if when is not None:
        return FrameInfo(when, "name", app, window)
    return FrameInfo(datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc), "mtime", app, window)


def list_image_files(directory: str | Path, *, recursive: bool = False) -> list[Path]:
    """Image files in a directory (by suffix), sorted by name."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidInput(f"{root}: not a directory")
    walker = root.rglob("*") if recursive else root.glob("*")
    return sorted(p for p in walker if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
