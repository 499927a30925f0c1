"""The memory viewer: a static page, its script and its style sheet."""

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse

from mirix_py.server.errors import ApiError

router = APIRouter(include_in_schema=False)

STATIC = Path(__file__).resolve().parents[1] / "static"
ASSETS = ("viewer.js", "viewer.css")
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/viewer")


@router.get("/viewer")
def viewer() -> FileResponse:
    return FileResponse(STATIC / "viewer.html", headers=HEADERS)


@router.get("/viewer/{name}")
def viewer_asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise ApiError(404, "not_found", "no such file")
    return FileResponse(STATIC / name, headers=HEADERS)
