"""OCR with Tesseract (through pytesseract): preprocessing, confidence filtering, layout, a process pool.

Tesseract parallelises one page with OpenMP, and on small machines that is a loss: on the 2-core
machines of DESIGN.md a 1080p text frame took 12.3 s with default threads and 1.4 s with
`OMP_THREAD_LIMIT=1`. So every Tesseract process gets one thread, and frames are spread over a
pool of them (one per core by default); see `OcrPool`.

Preprocessing (`prepare_for_ocr`) turns the frame into one grey image with dark text on a light
background: regions with a dark background (terminals, dark editors, sidebars) are inverted, so
Tesseract's own per-line inversion pass can be switched off (`tessedit_do_invert=0`), which is
most of its saving; optional downscaling trades accuracy for speed. Word confidences below
`min_confidence` are dropped, and the block / line structure Tesseract found is kept.
"""

from __future__ import annotations

import io
import logging
import os
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import lru_cache
from multiprocessing import get_context
from typing import Any, Literal, Sequence

from PIL import Image, ImageFilter, ImageOps

from mirix_py.errors import DependencyMissing, InvalidInput
from mirix_py.ingest.defaults import OCR_LANG
from mirix_py.ingest.ocr_confusions import fix_capital_i
from mirix_py.ingest.reread import looks_like_token, reread_tokens
from mirix_py.secrets.masking import split_secret_words

log = logging.getLogger("mirix_py.ocr")

__all__ = [
    "OcrBlock", "OcrConfig", "OcrError", "OcrLine", "OcrPool", "OcrResult", "OcrWord", "TesseractMissing",
    "available_languages", "check_tesseract", "ocr_image", "parse_tesseract_data", "prepare_for_ocr",
]

INSTALL_HINT = ("install Tesseract: `apt-get install tesseract-ocr` on Debian/Ubuntu, `brew install tesseract` "
                "on macOS, or the UB Mannheim installer on Windows; then `pip install pytesseract`")


class TesseractMissing(DependencyMissing):
    """The tesseract binary (Debian package tesseract-ocr) or pytesseract is not installed."""


class OcrError(InvalidInput):
    """Tesseract failed on one image (the rest of a batch still goes through)."""


@dataclass(frozen=True)
class OcrConfig:
    """How frames are read.

    lang: Tesseract language(s), e.g. "eng" or "eng+deu" (each needs tesseract-ocr-<lang>).
    psm: page segmentation mode; 3 (automatic layout) keeps blocks and is the right default for
        whole screens, 11 (sparse text) finds scattered labels but loses block structure.
    min_confidence: words Tesseract is less sure of (0-100) are dropped (but see keep_tokens).
    keep_tokens: keep low-confidence words shaped like URLs, addresses, identifiers and keys.
    scale: resize factor before OCR; None scales every frame to `target_height` pixels high.
        UI text on a 1080p screen is small for Tesseract: on the synthetic screens of synth.py,
        x1.25 read 0.89-0.91 of the characters right against 0.85 unscaled, for 1.2x the CPU
        (0.55 s against 0.47 s a frame); x1.5 was no better and slower. A 4K HiDPI frame is
        scaled down instead.
    invert_dark: invert dark-background regions and switch off Tesseract's inversion pass.
    reread_below: secret-shaped words (keys, passwords, ids, e-mail addresses) read with less
        confidence than this are read again, enlarged to `reread_scale` times the frame's size,
        in one more Tesseract call per frame that has any (`ingest.reread`); 0 switches it off.
    """

    lang: str = OCR_LANG
    psm: int = 3
    oem: int = 1
    min_confidence: float = 45.0
    keep_tokens: bool = True
    scale: float | None = None
    target_height: int = 1350
    invert_dark: bool = True
    timeout: float = 60.0
    extra_config: str = ""
    reread_below: float = 80.0
    reread_scale: float = 2.0

    def __post_init__(self) -> None:
        if not isinstance(self.lang, str) or not self.lang.strip() or any(
                not part.replace("_", "").isalnum() for part in self.lang.split("+")):
            raise InvalidInput(f"OCR language {self.lang!r} is not a Tesseract language code like 'eng' or 'eng+deu'")
        if self.psm not in range(0, 14):
            raise InvalidInput(f"psm must be a Tesseract page segmentation mode 0-13, not {self.psm}")
        if not 0 <= self.min_confidence <= 100:
            raise InvalidInput("min_confidence is a percentage, 0-100")
        if self.scale is not None and not 0.25 <= self.scale <= 4:
            raise InvalidInput("scale must be between 0.25 and 4")
        if not 240 <= self.target_height <= 8640:
            raise InvalidInput("target_height must be between 240 and 8640 pixels")
        if self.timeout <= 0:
            raise InvalidInput("timeout must be positive")
        if not 0 <= self.reread_below <= 100:
            raise InvalidInput("reread_below is a confidence, 0-100")
        if not 1 <= self.reread_scale <= 4:
            raise InvalidInput("reread_scale must be between 1 and 4")

    def scale_for(self, height: int) -> float:
        """The resize factor used for a frame `height` pixels high (auto: towards target_height, 0.5-2)."""
        if self.scale is not None:
            return self.scale
        return min(2.0, max(0.5, self.target_height / max(height, 1)))

    def tesseract_args(self) -> str:
        args = f"--oem {self.oem} --psm {self.psm}"
        if self.invert_dark:
            args += " -c tessedit_do_invert=0"
        return f"{args} {self.extra_config}".strip()


@dataclass(frozen=True)
class OcrWord:
    text: str
    confidence: float
    box: tuple[int, int, int, int]  # left, top, width, height in the original frame's pixels


@dataclass(frozen=True)
class OcrLine:
    words: tuple[OcrWord, ...]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def confidence(self) -> float:
        return sum(w.confidence for w in self.words) / len(self.words) if self.words else 0.0

    @property
    def box(self) -> tuple[int, int, int, int]:
        return _union(w.box for w in self.words)


@dataclass(frozen=True)
class OcrBlock:
    lines: tuple[OcrLine, ...]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    @property
    def box(self) -> tuple[int, int, int, int]:
        return _union(line.box for line in self.lines)


@dataclass(frozen=True)
class OcrResult:
    """What Tesseract read in one frame: blocks of lines of words, above the confidence bar."""

    blocks: tuple[OcrBlock, ...] = ()
    words_kept: int = 0
    words_dropped: int = 0
    seconds: float = 0.0
    size: tuple[int, int] = (0, 0)
    lang: str = OCR_LANG

    @property
    def text(self) -> str:
        """Lines joined by newlines, blocks separated by a blank line."""
        return "\n\n".join(block.text for block in self.blocks if block.lines)

    @property
    def lines(self) -> list[str]:
        return [line.text for block in self.blocks for line in block.lines]

    @property
    def mean_confidence(self) -> float:
        words = [w for b in self.blocks for line in b.lines for w in line.words]
        return sum(w.confidence for w in words) / len(words) if words else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "lines": len(self.lines), "blocks": len(self.blocks),
                "words_kept": self.words_kept, "words_dropped": self.words_dropped,
                "mean_confidence": round(self.mean_confidence, 1), "seconds": round(self.seconds, 3)}


def _union(boxes) -> tuple[int, int, int, int]:
    boxes = list(boxes)
    if not boxes:
        return (0, 0, 0, 0)
    left = min(b[0] for b in boxes)
    top = min(b[1] for b in boxes)
    right = max(b[0] + b[2] for b in boxes)
    bottom = max(b[1] + b[3] for b in boxes)
    return (left, top, right - left, bottom - top)


# ---------------------------------------------------------------- pure parts


def prepare_for_ocr(image: Image.Image, config: OcrConfig = OcrConfig()) -> Image.Image:
    """Grey, optionally rescaled, and (with invert_dark) dark text on light everywhere."""
    grey = image if image.mode == "L" else ImageOps.grayscale(image.convert("RGB") if image.mode not in ("RGB", "L") else image)
    scale = config.scale_for(grey.height)
    if abs(scale - 1.0) > 0.01:
        w, h = grey.size
        grey = grey.resize((max(1, round(w * scale)), max(1, round(h * scale))),
                           Image.Resampling.LANCZOS if scale < 1 else Image.Resampling.BICUBIC)
    if config.invert_dark:
        grey = invert_dark_regions(grey)
    return grey


def invert_dark_regions(grey: Image.Image, *, threshold: int = 110, radius: int = 12) -> Image.Image:
    """Invert the parts of a grey image whose local background is dark.

    The background is the grey image blurred well beyond stroke width (text is sparse, so a blur
    is dominated by the background); pixels where it is darker than `threshold` are inverted.
    Worked out at a quarter of the size and scaled back up, so it costs a few milliseconds.
    """
    w, h = grey.size
    small = grey.resize((max(1, w // 4), max(1, h // 4)), Image.Resampling.BOX)
    background = small.filter(ImageFilter.BoxBlur(max(1, radius // 4))).resize((w, h), Image.Resampling.NEAREST)
    mask = background.point(lambda v: 255 if v < threshold else 0)
    if mask.getbbox() is None:
        return grey
    out = grey.copy()
    out.paste(ImageOps.invert(grey), (0, 0), mask)
    return out


_COLUMNS = ("level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width", "height",
            "conf", "text")


def parse_tesseract_data(data: dict[str, list], *, min_confidence: float, scale: float = 1.0,
                         size: tuple[int, int] = (0, 0), seconds: float = 0.0, lang: str = "eng",
                         keep_tokens: bool = True, split_gap: float | None = 3.0) -> OcrResult:
    """Turn pytesseract.image_to_data(..., output_type=DICT) into blocks / lines / words.

    Words below `min_confidence` (and empty ones) are dropped, except, with `keep_tokens`, words
    that look like URLs, addresses or keys (see `looks_like_token`); a line with no word left
    disappears, and so does a block. A name's capital I read as l is put back (`ocr_confusions`), and
    a secret read as two words becomes one word again (`_with_split_secrets_joined`).
    Boxes are mapped back to the unscaled frame. With
    `split_gap`, lines are cut where words are further apart than that many line heights and a
    block is regrouped into columns (see `split_columns`).
    """
    missing = [c for c in _COLUMNS if c not in data]
    if missing:
        raise OcrError(f"unexpected Tesseract output, missing columns {missing}")
    blocks: dict[tuple[int, int], dict[tuple[int, int], list[OcrWord]]] = {}
    kept = dropped = 0
    for i in range(len(data["text"])):
        text = str(data["text"][i] or "").strip()
        try:
            conf = float(data["conf"][i])
        except (TypeError, ValueError):
            conf = -1.0
        if int(data["level"][i]) != 5 or not text:
            continue
        if conf < min_confidence and not (keep_tokens and looks_like_token(text)):
            dropped += 1
            continue
        kept += 1
        box = tuple(int(round(int(data[k][i]) / scale)) for k in ("left", "top", "width", "height"))
        block_key = (int(data["page_num"][i]), int(data["block_num"][i]))
        line_key = (int(data["par_num"][i]), int(data["line_num"][i]))
        blocks.setdefault(block_key, {}).setdefault(line_key, []).append(OcrWord(text, conf, box))  # type: ignore[arg-type]
    out_blocks: list[OcrBlock] = []
    for block_key in sorted(blocks):
        lines = [_with_capital_i(words) for _, words in sorted(blocks[block_key].items())]
        if split_gap:
            out_blocks.extend(split_columns(lines, split_gap))
        else:
            out_blocks.append(OcrBlock(tuple(lines)))
    out_blocks = [OcrBlock(tuple(_with_split_secrets_joined(line) for line in block.lines)) for block in out_blocks]
    return OcrResult(blocks=tuple(out_blocks), words_kept=kept, words_dropped=dropped, seconds=seconds, size=size,
                     lang=lang)


def _with_capital_i(words: Sequence[OcrWord]) -> OcrLine:
    """A line of `words` (reading order) with a name's I read as l put back (`ocr_confusions`)."""
    texts = fix_capital_i([w.text for w in words])
    return OcrLine(tuple(w if w.text == t else replace(w, text=t) for w, t in zip(words, texts)))


def _with_split_secrets_joined(line: OcrLine) -> OcrLine:
    """`line` with each pair of words that is one secret read as two (`split_secret_words`) made one
    word: the texts joined without the space, the boxes' union, the lower confidence. So the text
    holds the whole secret for the rules and the vault, and the line holding it is painted out."""
    runs = split_secret_words([w.text for w in line.words])
    if not runs:
        return line
    words = list(line.words)
    for start, end in reversed(runs):
        part = words[start:end]
        words[start:end] = [OcrWord("".join(w.text for w in part), min(w.confidence for w in part),
                                    _union(w.box for w in part))]
    return OcrLine(tuple(words))


def _split_line(line: OcrLine, gap: float) -> list[OcrLine]:
    words = sorted(line.words, key=lambda w: w.box[0])
    heights = sorted(w.box[3] for w in words)
    limit = gap * max(heights[len(heights) // 2], 1)
    out: list[list[OcrWord]] = [[words[0]]]
    for word in words[1:]:
        prev = out[-1][-1]
        if word.box[0] - (prev.box[0] + prev.box[2]) > limit:
            out.append([word])
        else:
            out[-1].append(word)
    return [OcrLine(tuple(ws)) for ws in out]


def split_columns(lines: Sequence[OcrLine], gap: float = 3.0) -> list[OcrBlock]:
    """Undo Tesseract's habit of reading across the panes of an app window.

    On screens, a list pane and a message pane side by side often come back as one block whose
    lines join a list entry to a sentence of the message ("IT Service Desk Sofia Ward works at
    ..."). Lines are cut where two words are more than `gap` line heights apart, and the pieces
    are grouped into columns by overlapping horizontal extent, each column a block, left to right.
    """
    pieces = [piece for line in lines for piece in _split_line(line, gap) if piece.words]
    columns: list[tuple[list[int], list[OcrLine]]] = []  # ([left, right], lines)
    for piece in sorted(pieces, key=lambda p: (p.box[1], p.box[0])):
        left, _, width, _ = piece.box
        right = left + width
        for span, members in columns:
            if left < span[1] and right > span[0]:
                span[0], span[1] = min(span[0], left), max(span[1], right)
                members.append(piece)
                break
        else:
            columns.append(([left, right], [piece]))
    # a piece can widen a column until it overlaps another one: merge those
    merged = True
    while merged:
        merged = False
        for i in range(len(columns)):
            for j in range(i + 1, len(columns)):
                (a, la), (b, lb) = columns[i], columns[j]
                if a[0] < b[1] and a[1] > b[0]:
                    columns[i] = ([min(a[0], b[0]), max(a[1], b[1])], la + lb)
                    del columns[j]
                    merged = True
                    break
            if merged:
                break
    columns.sort(key=lambda c: (c[0][0], min(p.box[1] for p in c[1])))
    return [OcrBlock(tuple(sorted(members, key=lambda p: (p.box[1], p.box[0])))) for _, members in columns]


# ---------------------------------------------------------------- Tesseract


def _pytesseract():
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - pytesseract is a dependency of the screenshots extra
        raise TesseractMissing(f"pytesseract is not installed; `pip install mirix-py[screenshots]` and {INSTALL_HINT}") from exc
    return pytesseract


def _select(cmd: str):
    """pytesseract runs the program named by a module global: point it at `cmd` for this call.
    (A process that mixes two tesseract binaries on several threads at once is not supported.)"""
    pytesseract = _pytesseract()
    if pytesseract.pytesseract.tesseract_cmd != cmd:
        pytesseract.pytesseract.tesseract_cmd = cmd
    return pytesseract


@lru_cache(maxsize=8)
def _check(cmd: str) -> str:
    if shutil.which(cmd) is None and not os.path.isfile(cmd):
        _pytesseract()
        raise TesseractMissing(f"the tesseract program was not found ({cmd!r}); {INSTALL_HINT}")
    pytesseract = _select(cmd)
    try:
        return str(pytesseract.get_tesseract_version())
    except Exception as exc:
        raise TesseractMissing(f"tesseract at {cmd!r} does not run ({exc}); {INSTALL_HINT}") from exc


def tesseract_cmd() -> str:
    return os.environ.get("MIRIX_TESSERACT_CMD") or os.environ.get("TESSERACT_CMD") or "tesseract"


def check_tesseract(cmd: str | None = None) -> str:
    """Return Tesseract's version, or raise TesseractMissing naming the package to install."""
    return _check(cmd or tesseract_cmd())


@lru_cache(maxsize=8)
def _languages(cmd: str) -> frozenset[str]:
    _check(cmd)
    return frozenset(_select(cmd).get_languages(config=""))


def available_languages(cmd: str | None = None) -> frozenset[str]:
    return _languages(cmd or tesseract_cmd())


def check_language(lang: str, cmd: str | None = None) -> None:
    have = available_languages(cmd)
    missing = [part for part in lang.split("+") if part not in have]
    if missing:
        pkgs = " ".join(f"tesseract-ocr-{m}" for m in missing)
        raise InvalidInput(f"Tesseract has no language data for {', '.join(missing)} (installed: "
                           f"{', '.join(sorted(have - {'osd'})) or 'none'}); install {pkgs}")


def ocr_image(image: Image.Image, config: OcrConfig = OcrConfig(), *, cmd: str | None = None) -> OcrResult:
    """Read one frame in this process. Tesseract runs with whatever OMP_THREAD_LIMIT this process has."""
    cmd = cmd or tesseract_cmd()
    check_tesseract(cmd)
    pytesseract = _select(cmd)
    started = time.perf_counter()
    scale = config.scale_for(image.height)
    prepared = prepare_for_ocr(image, config)
    try:
        data = _image_to_data(pytesseract, prepared, lang=config.lang, args=config.tesseract_args(),
                              timeout=config.timeout)
    except pytesseract.TesseractNotFoundError as exc:
        raise TesseractMissing(f"the tesseract program was not found; {INSTALL_HINT}") from exc
    except pytesseract.TesseractError as exc:  # a RuntimeError: caught first
        raise OcrError(f"Tesseract failed: {exc.message or exc}") from exc
    except RuntimeError as exc:  # pytesseract's "Tesseract process timeout"
        raise OcrError(f"Tesseract took longer than {config.timeout:g} s on a {image.width}x{image.height} frame") from exc
    if config.reread_below > 0:
        _reread(pytesseract, prepared, data, config, scale)
    return parse_tesseract_data(data, min_confidence=config.min_confidence, scale=scale, size=image.size,
                                seconds=time.perf_counter() - started, lang=config.lang,
                                keep_tokens=config.keep_tokens)


def _image_to_data(pytesseract, image: Image.Image, *, lang: str, args: str, timeout: float) -> dict:
    """`pytesseract.image_to_data(..., output_type=DICT)` with the frame sent to Tesseract on stdin
    and its TSV read from stdout. pytesseract's own call writes the whole frame, before its secret
    lines are painted out, to a file in the system's temp dir, readable by other users and left
    there when the process is killed; this writes none. Raises as pytesseract does."""
    encoded = io.BytesIO()
    image.save(encoded, format="PPM")  # PGM for a greyscale frame: written ~10x faster than PNG
    command = [pytesseract.pytesseract.tesseract_cmd, "stdin", "stdout", "-l", lang,
               "-c", "tessedit_create_tsv=1", *shlex.split(args)]
    try:
        done = subprocess.run(command, input=encoded.getvalue(), capture_output=True, timeout=timeout or None,
                              env=dict(pytesseract.pytesseract.environ))
    except FileNotFoundError as exc:
        raise pytesseract.TesseractNotFoundError() from exc
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError("Tesseract process timeout") from exc  # as pytesseract says it
    if done.returncode:
        raise pytesseract.TesseractError(done.returncode, done.stderr.decode("utf-8", "replace").strip())
    return dict(pytesseract.pytesseract.file_to_dict(done.stdout.decode("utf-8", "replace"), "\t", -1))


def _reread(pytesseract, prepared: Image.Image, data: dict, config: OcrConfig, scale: float) -> int:
    """Unsure secret-shaped words read again, closer (`ingest.reread`); the first reading stands
    when the second call fails."""
    args = replace(config, psm=6).tesseract_args()  # the stacked words are one uniform block

    def read(page: Image.Image) -> dict:
        return _image_to_data(pytesseract, page, lang=config.lang, args=args, timeout=config.timeout)

    try:
        return reread_tokens(prepared, data, below=config.reread_below, factor=config.reread_scale / scale,
                             read=read)
    except (pytesseract.TesseractError, RuntimeError, OSError):
        return 0


# ---------------------------------------------------------------- the pool

# OMP_THREAD_LIMIT for the tesseract processes started from this thread (None: inherit os.environ).
_OMP_LIMIT: ContextVar[str | None] = ContextVar("mirix_tesseract_omp_limit", default=None)


class _TesseractEnv(Mapping):
    """os.environ, plus OMP_THREAD_LIMIT when the calling thread belongs to an OcrPool.

    pytesseract starts Tesseract with `env=pytesseract.pytesseract.environ`; installing this view
    there gives the pool's tesseract processes one OpenMP thread each without changing this
    process's environment (which would also cap e.g. PyTorch, if imported later) or any other
    pytesseract caller.
    """

    def _data(self) -> dict[str, str]:
        env = dict(os.environ)
        limit = _OMP_LIMIT.get()
        if limit is not None:
            env["OMP_THREAD_LIMIT"] = limit
        return env

    def __getitem__(self, key: str) -> str:
        return self._data()[key]

    def __iter__(self):
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())


def _install_env() -> bool:
    module = _pytesseract().pytesseract
    if isinstance(getattr(module, "environ", None), _TesseractEnv):
        return True
    if getattr(module, "environ", None) is not os.environ:  # a pytesseract we do not know
        return False
    module.environ = _TesseractEnv()
    return True


def _thread_init(threads: int) -> None:
    _OMP_LIMIT.set(str(threads))


def _process_init(threads: int) -> None:
    os.environ["OMP_THREAD_LIMIT"] = str(threads)


def _worker_ocr(payload: tuple[str, tuple[int, int], bytes], config: OcrConfig, cmd: str) -> OcrResult:
    mode, size, raw = payload
    return ocr_image(Image.frombytes(mode, size, raw), config, cmd=cmd)


def _pack(image: Image.Image) -> tuple[str, tuple[int, int], bytes]:
    """Raw pixels: cheaper to send to a worker process than a pickled PIL image or a PNG."""
    if image.mode not in ("L", "RGB"):
        image = image.convert("RGB")
    return (image.mode, image.size, image.tobytes())


class OcrPool:
    """N frames read at once, each by a Tesseract process limited to one OpenMP thread.

    executor="threads" (default): N threads in this process each drive one tesseract process
    (pytesseract runs the tesseract program per image, so the OCR itself is always in another
    process; the threads only prepare images, which Pillow does without holding the GIL).
    Nothing is forked, and scripts need no `if __name__ == "__main__"` guard.
    executor="processes": a pool of N spawned Python processes, which also takes the
    preprocessing off this interpreter; the calling script must then be import-safe.
    workers=0: one frame at a time in the calling thread, with this process's own OpenMP
    settings (how the slow default-thread baseline of DESIGN.md was measured).
    """

    def __init__(self, config: OcrConfig = OcrConfig(), *, workers: int | None = None, threads_per_worker: int = 1,
                 cmd: str | None = None, executor: Literal["threads", "processes"] = "threads") -> None:
        self.config = config
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        if self.workers < 0:
            raise InvalidInput("workers must be >= 0")
        if executor not in ("threads", "processes"):
            raise InvalidInput("executor must be 'threads' or 'processes'")
        if threads_per_worker < 1:
            raise InvalidInput("threads_per_worker must be >= 1")
        self.threads = threads_per_worker
        self.executor = executor
        self.cmd = cmd or tesseract_cmd()
        self._executor: Executor | None = None
        self._lock = threading.Lock()

    def check(self) -> str:
        """Raise TesseractMissing / InvalidInput now rather than on the first frame."""
        version = check_tesseract(self.cmd)
        check_language(self.config.lang, self.cmd)
        return version

    def _pool(self) -> Executor:
        with self._lock:
            if self._executor is None:
                if self.executor == "processes":
                    self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("spawn"),
                                                         initializer=_process_init, initargs=(self.threads,))
                else:
                    if not _install_env():
                        log.warning("unknown pytesseract version: Tesseract keeps its default thread count")
                    self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="mirix-ocr",
                                                        initializer=_thread_init, initargs=(self.threads,))
            return self._executor

    def submit(self, image: Image.Image) -> Future:
        """Start reading a frame; the future yields an OcrResult or raises OcrError."""
        if self.workers == 0:
            future: Future = Future()
            try:
                future.set_result(ocr_image(image, self.config, cmd=self.cmd))
            except Exception as exc:
                future.set_exception(exc)
            return future
        if self.executor == "processes":
            return self._pool().submit(_worker_ocr, _pack(image), self.config, self.cmd)
        return self._pool().submit(ocr_image, image, self.config, cmd=self.cmd)

    def map(self, images: Sequence[Image.Image]) -> list[OcrResult | Exception]:
        """Read several frames; each entry is a result or the exception for that frame."""
        futures = [self.submit(im) for im in images]
        out: list[OcrResult | Exception] = []
        for f in futures:
            try:
                out.append(f.result())
            except Exception as exc:
                out.append(exc)
        return out

    def warm_up(self) -> None:
        """Start the workers now (a process worker imports PIL and pytesseract once)."""
        if self.workers:
            blank = Image.new("L", (64, 32), 255)
            for f in [self.submit(blank) for _ in range(self.workers)]:
                f.result()

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "OcrPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
