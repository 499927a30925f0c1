"""Thumbnails of frames, kept when asked (`ScreenshotConfig.keep_thumbnails`): small WebP files under
`<thumbnails dir>/<hash of user>/<day>/`, owner-only, deleted after the retention period. A raw
frame is never kept; a thumbnail is written only once its secret lines are painted out (`ingest.mask`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from mirix_py.errors import InvalidInput
from mirix_py.ingest.outcomes import IngestReport
from mirix_py.records import utcnow
from mirix_py.store.private import open_private, private_dir

if TYPE_CHECKING:
    from PIL import Image


def user_thumbnail_dir(thumbnails_dir: Path, user_id: str) -> Path:
    """Where one user's thumbnails are kept: a hash of the user id, so the path names nobody."""
    return Path(thumbnails_dir) / hashlib.sha256(user_id.encode()).hexdigest()[:16]


def kept_thumbnail(thumbnails_dir: Path, user_id: str, relative: str | None,
                   retention: timedelta | None = None, now: datetime | None = None) -> Path | None:
    """The file an input's `metadata["thumbnail"]` names, if it is still there, inside this user's
    folder (a path reaching elsewhere is no thumbnail) and not past `retention` (then it is deleted:
    the purge runs when thumbnails are written and in the engine's idle sweep, which may be later)."""
    if not relative:
        return None
    own = user_thumbnail_dir(thumbnails_dir, user_id).resolve()
    path = (Path(thumbnails_dir) / relative).resolve()
    if not path.is_relative_to(own) or path.suffix != ".webp" or not path.is_file():
        return None
    taken = _taken_at(path)
    if retention is not None and (taken is None or taken < (now or utcnow()) - retention):
        path.unlink(missing_ok=True)
        return None
    return path


def remove_thumbnails(thumbnails_dir: Path, user_id: str, relatives: list[str]) -> int:
    """Delete these thumbnails of the user (as inputs' `metadata["thumbnail"]` name them; one outside
    the user's folder is left alone), now: an erased input's frame goes with its text. How many went."""
    paths = [p for p in (kept_thumbnail(thumbnails_dir, user_id, r) for r in relatives) if p is not None]
    for path in paths:
        path.unlink(missing_ok=True)
    return len(paths)


def _taken_at(path: Path) -> datetime | None:
    """When a thumbnail's frame was taken: its day folder and the time its name starts with."""
    try:
        return datetime.strptime(path.parent.name + path.name[:12], "%Y-%m-%d%H%M%S%f").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


class Thumbnails:
    """The thumbnail folder of one ingestor (None: no folder, none kept); written bytes count in `totals`."""

    def __init__(self, root: Path | None, retention: timedelta | None, totals: IngestReport,
                 lock: threading.RLock) -> None:
        self.root = root
        self.retention = retention
        self.totals = totals
        self.lock = lock

    def _user_dir(self, user_id: str) -> Path | None:
        if self.root is None:
            return None
        return user_thumbnail_dir(self.root, user_id)

    def due(self, user_id: str, when: datetime) -> bool:
        """A thumbnail has a folder to go to and is not already past its retention period."""
        return self._user_dir(user_id) is not None and (self.retention is None or when >= utcnow() - self.retention)

    def write(self, thumb: Image.Image, user_id: str, when: datetime) -> str | None:
        """Write an already downscaled (and masked) thumbnail; its path relative to the thumbnail dir."""
        root = self._user_dir(user_id)
        if root is None or not self.due(user_id, when):
            return None
        day = root / when.astimezone(timezone.utc).strftime("%Y-%m-%d")
        private_dir(day)  # screen text: owner-only, like the rest of the data dir
        path = day / f"{when.astimezone(timezone.utc).strftime('%H%M%S%f')}-{os.urandom(3).hex()}.webp"
        with open_private(path, "wb") as fh:
            thumb.save(fh, format="WEBP", quality=60)
        with self.lock:
            self.totals.thumbnail_bytes += path.stat().st_size
        self.purge()
        return str(path.relative_to(root.parent))  # <hash of user>/<day>/<file>.webp

    def drop(self, user_id: str, relative: str) -> None:
        """Delete a thumbnail written for a frame that makes no input of this run (another run, or another
        frame of the batch, logged its file first): nothing names it, so it would stay until retention.
        Its bytes no longer count as stored."""
        path = None if self.root is None else kept_thumbnail(self.root, user_id, relative)
        if path is None:
            return
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:  # gone meanwhile (a purge): nothing left to drop
            return
        with self.lock:
            self.totals.thumbnail_bytes -= size

    def purge(self, now: datetime | None = None) -> int:
        """Delete thumbnails older than the retention period; returns how many files went."""
        if self.root is None or self.retention is None or not self.root.exists():
            return 0
        cutoff = (now or utcnow()) - self.retention
        removed = 0
        for user_dir in self.root.iterdir():
            if not user_dir.is_dir():
                continue
            for day in user_dir.iterdir():
                try:
                    day_start = datetime.strptime(day.name, "%Y-%m-%d").replace(tzinfo=timezone.utc)
                except ValueError:
                    continue
                if day_start + timedelta(days=1) <= cutoff:  # the whole day is out
                    removed += sum(1 for _ in day.glob("*.webp"))
                    shutil.rmtree(day, ignore_errors=True)
                elif day_start <= cutoff:
                    for file in day.glob("*.webp"):
                        stamp = _taken_at(file)
                        if stamp is not None and stamp < cutoff:
                            file.unlink(missing_ok=True)
                            removed += 1
        return removed

    def path(self, relative: str) -> Path:
        if self.root is None:
            raise InvalidInput("no thumbnail directory")
        path = (self.root / relative).resolve()
        if self.root.resolve() not in path.parents:
            raise InvalidInput("thumbnail path escapes the thumbnail directory")
        return path

    def delete_user(self, user_id: str) -> int:
        """Remove a user's thumbnails; returns how many files went."""
        root = self._user_dir(user_id)
        if root is None or not root.exists():
            return 0
        count = sum(1 for _ in root.rglob("*.webp"))
        shutil.rmtree(root, ignore_errors=True)
        return count
