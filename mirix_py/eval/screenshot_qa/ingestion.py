"""The session and its ingestion: the benchmark's configuration, the synthetic session
(`mirix_synth.screens`), its offline ingestion into a cached data dir, and the raw-OCR documents of
the baseline."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from mirix_py.eval.cache import (
    engine_fingerprint, needed_by_a_database, open_for_ingestion, refuse_deleting_what_a_database_needs,
    store_outside,
)
from mirix_py.store.footprint import stored_bytes

__all__ = ["CACHE_VERSION", "MODES", "Progress", "ScreenshotQAConfig", "baseline_documents", "ingest_cached",
           "resolve_embedder", "session"]

MODES = ("offline", "llm")
CACHE_VERSION = 2


@dataclass(frozen=True)
class ScreenshotQAConfig:
    seed: int = 7
    days: int = 3
    budget_words: int = 750
    mode: str = "offline"
    dwell: tuple[int, int] = (3, 7)
    size: tuple[int, int] = (1920, 1080)
    workers: int | None = None
    search_limit: int = 60
    user_id: str = "screenshot-qa"

    def validate(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}: use one of {', '.join(MODES)}")
        if not isinstance(self.days, int) or self.days < 1:
            raise ValueError(f"days must be a whole number >= 1, not {self.days!r}")
        if self.budget_words < 1:
            raise ValueError(f"the word budget must be >= 1, not {self.budget_words!r}")
        lo, hi = self.dwell
        if lo < 1 or hi < lo:
            raise ValueError(f"dwell must be MIN-MAX frames per visit with 1 <= MIN <= MAX, not {lo}-{hi}")
        if self.size[0] < 1280 or self.size[1] < 720:
            raise ValueError("synthetic screens are at least 1280x720")
        if self.workers is not None and self.workers < 0:
            raise ValueError("workers must be >= 0")
        if self.search_limit < 1:
            raise ValueError("search_limit must be >= 1")

    def ingestion_settings(self) -> dict[str, Any]:
        """What decides the ingested data (the cache key), apart from the engine's source."""
        from mirix_py.ingest.screenshots import ScreenshotConfig

        sc = ScreenshotConfig()
        return {"seed": self.seed, "days": self.days, "dwell": list(self.dwell), "size": list(self.size),
                "similarity_threshold": sc.similarity_threshold, "batch_frames": sc.batch.max_frames,
                "batch_seconds": sc.batch.max_seconds, "ocr_lang": sc.ocr.lang, "user_id": self.user_id,
                "cache_version": CACHE_VERSION}


_DEFAULT = object()
Progress = Callable[[str, int], Callable[[int], None]]  # (description, total) -> advance(n)


def _no_progress(description: str, total: int) -> Callable[[int], None]:
    def advance(n: int = 1) -> None:
        return None

    return advance


def _offline_settings(data_dir: Path) -> Any:
    from mirix_py.settings import Settings

    settings = Settings.from_env(data_dir=data_dir)
    return settings.model_copy(update={"llm_provider": None, "llm_model": None, "llm_base_url": None})


def _store_outside() -> dict[str, Any] | None:
    """The database or Chroma server the settings keep memories in (None for the embedded store): part
    of the cache key, as in the LoCoMo eval."""
    return store_outside(_offline_settings(Path(".")))


def resolve_embedder(embedder: Any = _DEFAULT) -> Any:
    """The embedder to use: the one given, or the one the settings name (MIRIX_EMBEDDER, default MiniLM)."""
    if embedder is not _DEFAULT:
        return embedder
    from mirix_py.store.embeddings import load_embedder

    return load_embedder(_offline_settings(Path(".")).embedder)


def session(config: ScreenshotQAConfig) -> tuple[Any, list[Any], dict[str, Any]]:
    from mirix_synth.screens import ScreenSynth, frame_file_name, session_manifest

    synth = ScreenSynth(seed=config.seed, size=(config.size[0], config.size[1]))
    frames = synth.session(days=config.days, dwell=(config.dwell[0], config.dwell[1]))
    manifest = session_manifest(frames, synth=synth, files=[frame_file_name(f) for f in frames])
    return synth, frames, manifest


def ingest_cached(config: ScreenshotQAConfig, cache_dir: Path, *, embedder: Any = _DEFAULT, fresh: bool = False,
                  progress: Progress = _no_progress) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Generate the session and ingest it offline into a cached data dir keyed by the seed, days,
    ingestion settings, embedder, database and engine source; returns (data dir, ingestion info, manifest).
    An existing complete ingestion is reused unless `fresh`; a data dir a database still needs (its
    vault key, its vectors) is never deleted (`refuse_deleting_what_a_database_needs`), nor is a database
    already holding the user ingested into."""
    from mirix_py.ingest.screenshots import ScreenshotConfig
    from mirix_synth.screens import write_session

    synth, frames, manifest = session(config)
    settings = config.ingestion_settings()
    embedder = resolve_embedder(embedder)
    embedder_name = "none" if embedder is None else (getattr(embedder, "name", None) or type(embedder).__name__)
    settings["embedder"] = embedder_name
    if (outside := _store_outside()) is not None:  # a database's memories are not the data dir's
        settings["store"] = outside
    if (zone := _offline_settings(Path(".")).timezone) is not None:  # the memories' days are reckoned in it
        settings["timezone"] = zone
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:10]
    fingerprint = engine_fingerprint()
    key = f"s{config.seed}-d{config.days}-{digest}-{fingerprint}"
    root = Path(cache_dir) / key
    marker = root / "ingested.json"
    if marker.exists() and not fresh:
        info = json.loads(marker.read_text(encoding="utf-8"))
        info["reused"] = True
        return root / "data", info, manifest
    if root.exists():
        refuse_deleting_what_a_database_needs(root, fresh=fresh, data_dir=root / "data")
        shutil.rmtree(root)
    for old in Path(cache_dir).glob(f"s{config.seed}-d{config.days}-{digest}-*"):  # older engine sources
        if old.is_dir() and old != root and not needed_by_a_database(old / "data"):  # a database's are kept
            shutil.rmtree(old, ignore_errors=True)
    shots = root / "shots"
    t0 = time.perf_counter()
    write_session(frames, shots, synth=synth, progress=progress("writing synthetic frames", len(frames)))
    write_seconds = time.perf_counter() - t0
    from mirix_py.engine import Mirix

    mx = open_for_ingestion(root, lambda: Mirix(settings=_offline_settings(root / "data"), embedder=embedder),
                            lambda opened: refuse_a_held_user(opened, config.user_id))
    try:
        mx.configure_screenshots(ScreenshotConfig(workers=config.workers))
        mx.search("warm up", user_id=config.user_id)  # load the embedder before the clock starts
        advance = progress("ingesting screenshots", len(frames))
        report = mx.ingest_screenshots(shots, user_id=config.user_id, progress=advance)
        stored = stored_bytes(mx.store, config.user_id)
        counts = memory_counts(mx, config.user_id)
        describe = mx.describe()
    finally:
        mx.close()
    # the baseline's documents: the same frames the engine read, OCR'd again with the engine's OCR
    # settings (the input log drops the text of processed screenshots, so it cannot be reused)
    read = sorted(o.name for o in report.outcomes if o.status in ("processed", "no_text"))
    docs = baseline_documents(shots, read, workers=config.workers, progress=progress)
    rep = report.to_dict()
    wall = report.wall_seconds or math.nan
    info = {
        "cache_key": key, "data_dir": str(root / "data"), "engine_fingerprint": fingerprint, "settings": settings,
        "engine": {k: v for k, v in describe.items() if k != "data_dir"}, "reused": False,
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "write_seconds": round(write_seconds, 2),
        "report": rep, "stored": stored, "memories": counts,
        "throughput": {"frames": report.frames, "unique": report.unique, "duplicates": report.duplicates,
                       "duplicate_share": report.duplicate_share, "wall_seconds": report.wall_seconds,
                       "unique_fps": report.unique / wall, "all_fps": report.frames / wall,
                       "ocr_seconds": report.ocr_seconds, "load_average": os.getloadavg()[0],
                       "cpus": os.cpu_count()},
        "storage": _storage(report.png_bytes, report.frames, report.unique, stored),
    }
    (root / "baseline_docs.json").write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(shots, ignore_errors=True)  # the PNGs are regenerated from the seed when needed
    marker.write_text(json.dumps(info, indent=1), encoding="utf-8")
    return root / "data", info, manifest


def memory_counts(mx: Any, user_id: str) -> dict[str, int]:
    """The user's memories by type, as the ingestion's marker keeps them."""
    return dict(mx.store.count(user_id=user_id))


def refuse_a_held_user(mx: Any, user_id: str) -> None:
    """Before an ingestion: a database already holding the benchmark user's memories would mix them
    with the session's, and the questions would be scored on both."""
    held = sum(memory_counts(mx, user_id).values())
    if held:
        raise RuntimeError(f"the store already holds {held} memories of the user {user_id!r}: give a database "
                           "that holds none of them")


def check_reused_store(mx: Any, user_id: str, info: dict[str, Any]) -> None:
    """A reused ingestion's store must still hold what the ingestion left (an outside database can be
    emptied or written to between runs): anything else would score a store nobody ingested."""
    expected, held = info.get("memories"), memory_counts(mx, user_id)
    if expected is not None and held != expected:
        raise RuntimeError(f"the cached ingestion's store holds {sum(held.values())} memories of {user_id!r} where "
                           f"the ingestion left {sum(expected.values())}: it changed since; run again with --fresh "
                           "on an empty database")


def baseline_documents(shots: Path, names: Sequence[str], *, workers: int | None = None,
                       progress: Progress = _no_progress) -> list[tuple[str, str]]:
    """(OCR text, file name) of each named frame, read with the engine's default OCR settings."""
    from PIL import Image

    from mirix_py.ingest.ocr import OcrPool
    from mirix_py.ingest.screenshots import ScreenshotConfig

    docs: list[tuple[str, str]] = []
    advance = progress("OCR for the raw-text baseline", len(names))
    with OcrPool(ScreenshotConfig().ocr, workers=workers) as pool:
        step = max(2 * pool.workers, 2)
        for i in range(0, len(names), step):
            chunk = names[i:i + step]
            images = []
            for name in chunk:
                with Image.open(shots / name) as im:
                    images.append(im.convert("RGB"))
            for name, res in zip(chunk, pool.map(images)):
                if isinstance(res, Exception):
                    raise RuntimeError(f"baseline OCR of {name} failed: {res}") from res
                docs.append((res.text, name))
            advance(len(chunk))
    return docs


def _storage(png_bytes: int, frames: int, unique: int, stored: dict[str, int]) -> dict[str, Any]:
    total = sum(stored.values())
    png_per_frame = png_bytes / frames if frames else math.nan
    per_frame = total / frames if frames else math.nan
    return {"png_bytes": png_bytes, "png_per_frame": png_per_frame, "stored_bytes": total,
            "stored_per_frame": per_frame, "stored_per_unique_frame": total / unique if unique else math.nan,
            "stored_share": per_frame / png_per_frame if png_per_frame else math.nan,
            "by_part_per_frame": {k: v / frames if frames else math.nan for k, v in stored.items()}}

