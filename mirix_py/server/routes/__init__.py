"""One `APIRouter` per resource; `create_app` includes them all (`ROUTERS`, in order)."""

from fastapi import APIRouter

from mirix_py.server.routes import (
    core, docs, inputs, keys, mem0, memories, recall, screen, screenshots, service, users, viewer,
)

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    service.router, viewer.router, users.router, memories.router, screenshots.router, inputs.router,
    screen.router, recall.router, core.router, keys.router, mem0.router, docs.router,
)
