"""What a black-box probe of `mirix serve` found open: the body limit's side door (a memory id
"screenshots"), Swagger keeping the API key in localStorage, the docs pages' headers, image bombs
answered 422, C1 controls and line separators in user ids and key names, and an MCP 401 naming
metadata nobody serves."""

from __future__ import annotations

import base64
import hashlib
import re
import struct
import zlib
from urllib.parse import quote

import httpx
import pytest
from test_viewer import _wait, browser  # noqa: F401  (the viewer tests' headless Chromium fixture)

from mirix_py.errors import InvalidInput
from mirix_py.server.limits import Limits, route_limit

MIB = 1 << 20


def test_a_json_body_over_the_limit_is_refused_whatever_the_path_ends_with(live_sqlite):
    c = live_sqlite.client(live_sqlite.alice)
    body = b'{"fields": {"summary": "' + b"x" * (2 * MIB) + b'"}}'
    headers = {"content-type": "application/json"}
    for path in ("/v1/users/alice/memories/screenshots", "/v1/users/alice/memories/screenshotz"):
        r = c.patch(path, content=body, headers=headers)
        assert r.status_code == 413 and r.json()["error"] == "too_large", (path, r.status_code)
    for path in ("/memories", "/search", "/nowhere/screenshots"):  # mem0-style routes, an unknown path
        r = c.post(path, content=body, headers=headers)
        assert r.status_code == 413 and r.json()["error"] == "too_large", (path, r.status_code)

    def chunks():  # no Content-Length: counted as it streams
        for _ in range(32):
            yield b"x" * 65536

    r = c.patch("/v1/users/alice/memories/screenshots", content=chunks(), headers=headers)
    assert r.status_code == 413
    # the upload route itself still takes a body past 1 MiB (read, then refused as no image)
    r = c.post("/v1/users/alice/screenshots", files={"image": ("x.png", b"\x89PNG" + b"0" * (2 * MIB), "image/png")})
    assert r.status_code == 422 and "not a readable image" in r.json()["message"]


def test_only_the_screenshot_upload_route_gets_the_upload_limit():
    from mirix_py.server.routes import ROUTERS

    routes = [route for router in ROUTERS for route in router.routes]
    limits = Limits(max_body=1, max_upload=2)
    large = set()
    for route in routes:
        for method in sorted(getattr(route, "methods", None) or {"GET"}):
            path = re.sub(r"\{[^}]+\}", "screenshots", route.path)  # every parameter named like the upload
            if route_limit({"type": "http", "method": method, "path": path, "root_path": ""}, limits, routes) == 2:
                large.add((method, route.path))
    assert large == {("POST", "/v1/users/{user_id}/screenshots")}


def _png(width: int, height: int) -> bytes:
    """A PNG header of this size (Pillow reads the size from it before any pixel)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("size", [(10_000, 6_000), (10_000, 10_000), (20_000, 20_000)])  # 60, 100 and 400 MP
def test_an_image_over_50_megapixels_is_413(live_sqlite, size):
    c = live_sqlite.client(live_sqlite.alice)
    r = c.post("/v1/users/alice/screenshots", files={"image": ("big.png", _png(*size), "image/png")})
    assert r.status_code == 413 and r.json()["error"] == "too_large", r.text


@pytest.mark.parametrize("bad", ["\x85", "\x9b", "\u2028", "\u2029", "\x00", "\x7f"])
def test_user_ids_and_key_names_refuse_invisible_line_breaks_and_controls(live_sqlite, bad):
    with pytest.raises(InvalidInput):
        live_sqlite.keys.create([f"bo{bad}b"], name="x")
    with pytest.raises(InvalidInput):
        live_sqlite.keys.create(["bob"], name=f"laptop{bad}key")
    admin = live_sqlite.client(live_sqlite.admin)
    assert admin.get(f"/v1/users/{quote(f'al{bad}ice')}/memories").status_code == 422
    r = admin.post("/v1/keys", json={"users": ["bob"], "name": f"laptop{bad}key"})
    assert r.status_code == 422, r.text
    assert admin.post("/v1/keys", json={"users": [f"bo{bad}b"], "name": "laptop"}).status_code == 422
    assert admin.post("/v1/keys", json={"users": ["bob"], "name": "laptop é ß 東京"}).status_code == 201


def test_docs_pages_keep_no_key_and_send_the_viewers_headers(live_sqlite):
    anon = live_sqlite.client(None)
    for page in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        r = anon.get(page)
        assert r.status_code == 200, page
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp and "unsafe-eval" not in csp
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
        for script in re.findall(r"<script>(.*?)</script>", r.text, re.S):  # inline set-up allowed by hash only
            digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in csp
        assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert '"persistAuthorization": true' not in anon.get("/docs").text


def test_swagger_authorize_leaves_no_key_in_storage(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(live_sqlite.url + "/docs")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"), timeout=30)
    browser.find_element(By.CSS_SELECTOR, "button.authorize").click()
    field = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".auth-container input[type=text], "
                                                                      ".auth-container input[type=password]"))
    field[0].send_keys(live_sqlite.alice)
    browser.find_element(By.CSS_SELECTOR, ".auth-container button.authorize").click()
    assert _wait(browser, lambda d: d.find_elements(By.XPATH, "//div[contains(@class, 'auth-container')]"
                                                               "//button[normalize-space()='Logout']"))
    stored = browser.execute_script("return JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])")
    assert live_sqlite.alice not in stored and live_sqlite.alice.split(".")[1] not in stored
    browser.get(live_sqlite.url + "/docs")  # a reload: the key is gone with the page
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "button.authorize"), timeout=30)
    assert live_sqlite.alice not in browser.execute_script("return JSON.stringify(Object.entries(localStorage))")


def test_the_mcp_401_names_no_metadata_nobody_serves(tmp_path, embedder, live_server_factory):
    server, live = live_server_factory(tmp_path, embedder, mcp=True)
    try:
        r = httpx.post(live.url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 401
        challenge = r.headers["www-authenticate"]
        assert challenge.lower().startswith("bearer")
        for url in re.findall(r'resource_metadata="([^"]+)"', challenge):  # what a 401 names must be served
            assert httpx.get(url).status_code == 200, url
        assert "resource_metadata" not in challenge  # mirix keys come from no OAuth server: nothing to discover
        keyed = httpx.post(live.url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Accept": "application/json, text/event-stream",
                                    "Authorization": f"Bearer {live.alice}"})
        assert keyed.status_code != 401
        big = httpx.post(live.url + "/mcp/", content=b'{"jsonrpc": "2.0", "id": 2, "method": "' + b"x" * (2 * MIB) + b'"}',
                         headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                                  "Authorization": f"Bearer {live.alice}"})
        assert big.status_code == 413  # the mounted MCP app has the same body limit
    finally:
        server.__exit__()
        live.mx.close()


def test_the_server_answers_503_when_its_data_dir_is_gone(tmp_path, embedder, live_server_factory):
    import shutil

    server, live = live_server_factory(tmp_path, embedder)
    try:
        shutil.rmtree(tmp_path / "data")
        assert httpx.get(live.url + "/health").status_code == 503
        r = httpx.post(live.url + "/v1/users/alice/memories", json={"content": "Carla bought seeds.", "wait": True},
                       headers={"Authorization": f"Bearer {live.alice}"})
        assert r.status_code == 503 and "database unavailable" in r.json()["message"]
    finally:
        server.__exit__(None, None, None)
