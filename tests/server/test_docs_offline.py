"""API docs offline and the spec's security scheme: /docs and /redoc load their scripts from this
server (no CDN) and render in headless Chromium with no network; the OpenAPI spec declares the
bearer key so "Authorize" works; /context gives cut hits and a ready prompt block."""

from __future__ import annotations

import re


from test_viewer import _wait, browser  # noqa: F401  (the viewer tests' headless Chromium fixture)


def test_docs_pages_reference_only_local_assets(live_sqlite):
    anon = live_sqlite.client(None)
    for page, assets in (("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")), ("/redoc", ("redoc.standalone.js",))):
        r = anon.get(page)
        assert r.status_code == 200, page
        urls = re.findall(r"""(?:src|href)=["']?([^"' >]+)""", r.text)
        assert urls and all(u.startswith("/") for u in urls), urls  # nothing from another host
        assert not re.search(r"https?://", r.text.replace("http://www.w3.org", ""))
        for name in assets:
            asset = anon.get(f"/docs-assets/{name}")
            assert asset.status_code == 200 and len(asset.content) > 100_000
    assert anon.get("/docs-assets/..%2Fcore.py").status_code == 404
    assert anon.get("/docs-assets/evil.js").status_code == 404


def test_openapi_declares_the_bearer_key(live_sqlite):
    spec = live_sqlite.client(None).get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer", "description": "An API key from `mirix keys create`."}
    assert schemes["apiKey"]["in"] == "header" and schemes["apiKey"]["name"] == "X-API-Key"
    add = spec["paths"]["/v1/users/{user_id}/memories"]["post"]
    assert {"bearer": []} in add["security"] and {"apiKey": []} in add["security"]
    assert "security" not in spec["paths"]["/health"]["get"]


def test_context_is_cut_to_the_question_and_has_a_prompt(live_sqlite):
    c = live_sqlite.client(live_sqlite.alice)
    filler = "\n".join(f"Section {i}: the quarterly report lists routine figures for region {i}." for i in range(120))
    document = filler + "\nThe office plant is a fiddle-leaf fig named Gustav that needs water on Fridays.\n" + filler
    assert len(document) > 7000
    c.post("/v1/users/alice/memories", json={"content": document, "kind": "document", "wait": True})
    body = c.post("/v1/users/alice/context", json={"message": "When does Gustav the fig need water?"}).json()
    hit = next(h for h in body["hits"] if "Gustav" in h["memory"].get("content", "") + h["text"])
    assert "Gustav" in hit["text"] and len(hit["text"]) < 2000  # the passage, not the 7k document
    assert body["prompt"].startswith("Long-term memory of user alice") and "Gustav" in body["prompt"]
    assert len(body["prompt"]) < 4000


def test_swagger_ui_renders_offline_and_authorize_sends_the_key(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(live_sqlite.url + "/docs")
    title = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"), timeout=30)
    assert "mirix-py" in title[0].text
    assert _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "button.authorize"))
    browser.get(live_sqlite.url + "/redoc")
    heading = _wait(browser, lambda d: [h for h in d.find_elements(By.CSS_SELECTOR, "h1") if "mirix-py" in h.text],
                    timeout=30)
    assert heading
