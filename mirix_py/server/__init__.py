"""Serving mirix-py: the REST API (FastAPI), API keys bound to users, and the memory viewer page.

Needs the `server` extra: `pip install 'mirix-py[server]'`. Names are imported lazily, so the
`mirix` command works without it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "Limits", "KeyStore", "Principal"]


def __getattr__(name: str) -> Any:
    if name in ("create_app", "Limits"):
        from mirix_py.server import app

        return getattr(app, name)
    if name in ("KeyStore", "Principal"):
        from mirix_py.server import keys

        return getattr(keys, name)
    raise AttributeError(name)
