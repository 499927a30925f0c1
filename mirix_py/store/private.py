"""Owner-only files: a data dir holds every memory, so no other local account may read it.

Under the usual umask 022 a plain `mkdir` or `open` gives 0755 / 0644: readable by every user of a
shared machine. What the engine creates goes through here instead: folders 0700, files 0600 (the
mode is given at creation, so there is no moment a file is wider). SQLite gives its `-wal` and
`-shm` files the mode of the database file, so creating `mirix.db` 0600 first covers all three.
Embedded Chroma creates its own files with the process umask: they sit in an owner-only folder
(unreachable by others) and are narrowed to 0600 when the engine opens and closes the index.

`open_to_others` is what `mirix doctor` reports (entries another account can reach: the entry and
every folder above it inside the data dir grant group or other access) and `narrow` what
`--repair` does. Modes are POSIX; on Windows both are no-ops.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

__all__ = ["DIR_MODE", "FILE_MODE", "narrow", "open_private", "open_to_others", "private_dir", "private_file"]

DIR_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077
POSIX = os.name == "posix"


def private_dir(path: str | Path) -> Path:
    """`mkdir -p` whose new folders are 0700. An existing folder keeps its mode (doctor reports it),
    unless it is empty: a store about to be made there (`mkdir data && mirix add -d data`) is private
    from its first file."""
    path = Path(path)
    if POSIX and path.is_dir() and not any(path.iterdir()):
        os.chmod(path, DIR_MODE)
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another thread or process
            continue
        if POSIX:
            os.chmod(folder, DIR_MODE)  # mkdir's mode is narrowed by the umask, never widened: be exact
    if not path.is_dir():
        raise NotADirectoryError(str(path))
    return path


def private_file(path: str | Path) -> Path:
    """Create `path` empty and 0600 if it does not exist (before a library such as SQLite opens it)."""
    path = Path(path)
    private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass
    return path


def _opener(path: str, flags: int) -> int:
    return os.open(path, flags, FILE_MODE)


def open_private(path: str | Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """`open(path, mode)` for writing; a file it creates is 0600 (an existing one is narrowed)."""
    fh = open(path, mode, opener=_opener, **kwargs)
    if POSIX:
        try:
            os.chmod(fh.fileno(), FILE_MODE)
        except OSError:  # another owner's file we may write to: its mode is theirs
            pass
    return fh


def _walk(root: Path) -> list[Path]:
    """`root` and everything below it; symlinked folders are not followed."""
    out = [root]
    for folder, dirs, files in os.walk(root):
        out += [Path(folder) / name for name in dirs + files]
    return out


def open_to_others(root: str | Path) -> list[str]:
    """Entries under `root` (itself included) another local account can reach: their own mode grants
    group or other access and so does every folder from `root` down to them. Paths relative to
    `root` ("." for itself), with their mode."""
    root = Path(root)
    if not POSIX or not root.is_dir():
        return []
    found: list[str] = []
    for path in _walk(root):
        try:
            mode = path.lstat().st_mode & 0o777
        except OSError:  # removed meanwhile
            continue
        if path.is_symlink() or not mode & _OTHERS:
            continue
        rel = path.relative_to(root)
        folders = [root / Path(*rel.parts[:i]) for i in range(len(rel.parts))]
        try:
            reachable = all(f.stat().st_mode & 0o011 for f in folders)
        except OSError:
            continue
        if reachable:
            found.append(f"{rel.as_posix() or '.'} ({oct(mode)[2:].zfill(4)})")
    return found


def narrow(root: str | Path) -> int:
    """Take group and other access from everything under `root` (itself included): folders become
    0700 and files 0600 as the engine makes them (owner bits are kept). How many entries changed."""
    root = Path(root)
    if not POSIX or not root.is_dir():
        return 0
    changed = 0
    for path in _walk(root):
        try:
            mode = path.lstat().st_mode & 0o777
        except OSError:
            continue
        if path.is_symlink() or not mode & _OTHERS:
            continue
        try:
            os.chmod(path, mode & ~_OTHERS)
        except OSError:  # another owner's file: left for the report
            continue
        changed += 1
    return changed
