"""API docs that work offline: Swagger UI at /docs and ReDoc at /redoc, with their scripts and
styles served by this server from the `fastapi-offline` package (pinned in the `server` extra)
instead of a CDN. FastAPI's own CDN pages are switched off in `create_app`.

The pages share an origin with the viewer, so they get its headers (`routes/viewer.py`: no framing, no
sniffing, no referrer) with a CSP that admits only their own inline set-up script, by hash. An API key
given to Swagger's "Authorize" lives in the page only: `persistAuthorization` would keep it in clear in
the origin's `localStorage` after the tab is closed."""

import base64
import hashlib
import re
from importlib.util import find_spec
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse

from mirix_py.server.errors import ApiError
from mirix_py.server.routes.viewer import HEADERS as VIEWER_HEADERS

router = APIRouter(include_in_schema=False)
ASSETS_URL = "/docs-assets"
ASSETS = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
          "redoc.standalone.js": "text/javascript", "favicon.png": "image/png"}


def assets_dir() -> Path | None:
    """The folder holding the Swagger UI and ReDoc files, or None when the package is missing."""
    spec = find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static"
    return folder if all((folder / name).is_file() for name in ASSETS) else None


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def _secured(page: HTMLResponse) -> HTMLResponse:
    """`page` with the viewer's headers; its inline scripts allowed by their sha256. Swagger UI and
    ReDoc set inline styles, and ReDoc runs a worker from a blob."""
    hashes = "".join(f" 'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
                     for script in _INLINE_SCRIPT.findall(bytes(page.body).decode()))
    csp = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
           f"script-src 'self'{hashes}; worker-src 'self' blob:; connect-src 'self'; base-uri 'none'; "
           "form-action 'self'; frame-ancestors 'none'")
    page.headers.update({**VIEWER_HEADERS, "Content-Security-Policy": csp})
    return page


def _root(request: Request) -> str:
    return request.scope.get("root_path", "") or ""


@router.get(f"{ASSETS_URL}/{{name}}")
def asset(name: str) -> FileResponse:
    folder = assets_dir()
    if name not in ASSETS or folder is None:
        raise ApiError(404, "not_found", f"no docs asset {name!r}")
    return FileResponse(folder / name, media_type=ASSETS[name], headers={"Cache-Control": "max-age=86400"})


def _missing() -> HTMLResponse:
    return _secured(HTMLResponse("<h1>API docs unavailable</h1><p>Install the server extra (<code>pip install "
                        "'mirix-py[server]'</code>, which brings <code>fastapi-offline</code>); the spec is at "
                        "<a href='/openapi.json'>/openapi.json</a>.</p>", status_code=503))


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI; "Authorize" takes an API key (the spec declares the bearer scheme)."""
    if assets_dir() is None:
        return _missing()
    root = _root(request)
    return _secured(get_swagger_ui_html(
        openapi_url=f"{root}{request.app.openapi_url}", title=f"{request.app.title} - Swagger UI",
        oauth2_redirect_url=f"{root}/docs/oauth2-redirect",
        swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js", swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
        swagger_ui_parameters={"persistAuthorization": False}))


@router.get("/docs/oauth2-redirect")
def swagger_ui_redirect() -> HTMLResponse:
    return _secured(get_swagger_ui_oauth2_redirect_html())


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    if assets_dir() is None:
        return _missing()
    root = _root(request)
    return _secured(get_redoc_html(
        openapi_url=f"{root}{request.app.openapi_url}", title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js", redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
        with_google_fonts=False))
