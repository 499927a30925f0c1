"""Serving mirix-py: the REST API (FastAPI), API keys bound to users, and the memory viewer page.

Needs the `server` extra: `pip install 'mirix-py[server]'`.
"""

from mirix_py.server.app import Limits, create_app
from mirix_py.server.keys import KeyStore, Principal

__all__ = ["create_app", "Limits", "KeyStore", "Principal"]
