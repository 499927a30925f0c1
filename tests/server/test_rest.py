"""The REST API against a live uvicorn server on loopback, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
import uuid

import pytest


def _uid(prefix="u"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _wait_processed(client, user, input_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/v1/users/{user}/inputs/{input_id}").json()
        if body["status"] in ("processed", "failed"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"input {input_id} still {body['status']}")


def test_health_and_openapi(live):
    anon = live.client(None)
    health = anon.get("/health")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["database"] in ("sqlite", "postgresql")
    spec = anon.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/v1/users/{user_id}/memories", "/v1/users/{user_id}/screenshots", "/v1/users/{user_id}/search",
                 "/v1/users/{user_id}/chat", "/v1/users/{user_id}/memories/{memory_id}/history",
                 "/v1/users/{user_id}/core", "/v1/users/{user_id}/inputs/{input_id}", "/v1/users/{user_id}",
                 "/v1/keys", "/health"):
        assert path in paths, path
    # request bodies reuse the records: a message in an add body is the records' Message
    assert "Message" in spec["components"]["schemas"] and "SearchHit" in spec["components"]["schemas"]
    assert "multipart/form-data" in paths["/v1/users/{user_id}/screenshots"]["post"]["requestBody"]["content"]


def test_async_add_is_accepted_then_processed(live):
    c = live.client(live.alice)
    r = c.post("/v1/users/alice/memories", json={"content": "My sister Anna is a painter in Lisbon."})
    assert r.status_code == 202
    body = r.json()
    assert body["status"] == "pending" and len(body["input_ids"]) == 1
    assert r.headers["location"] == f"/v1/users/alice/inputs/{body['input_ids'][0]}"
    status = _wait_processed(c, "alice", body["input_ids"][0])
    assert status["status"] == "processed" and status["attempts"] == 1 and "messages" not in status
    hits = c.post("/v1/users/alice/search", json={"query": "Anna painter"}).json()
    assert any("Anna" in h["text"] for h in hits)
    assert all(body["input_ids"][0] in h["memory"]["source_ids"] for h in hits if "Anna" in h["text"])


def test_sync_add_messages_search_get_update_history_delete(live):
    c = live.client(live.alice)
    messages = [
        {"role": "user", "name": "Alice", "id": "D1:1", "content": "My brother Tom is a pilot."},
        {"role": "user", "name": "Alice", "id": "D1:2", "content": "Yesterday we went sailing on the lake."},
    ]
    r = c.post("/v1/users/alice/memories", json={"content": messages, "wait": True,
                                                 "occurred_at": "2024-05-08T13:56:00+00:00"})
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["status"] == "processed" and result["changes"]
    hits = c.post("/v1/users/alice/search", json={"query": "Tom brother", "memory_types": ["semantic"],
                                                  "limit": 5}).json()
    assert hits and {h["memory"]["memory_type"] for h in hits} == {"semantic"}
    tom = next(h["memory"] for h in hits if h["memory"]["name"] == "Tom")
    assert "D1:1" in tom["source_ids"] and result["input_ids"][0] in tom["source_ids"]
    memory_id = tom["id"]

    got = c.get(f"/v1/users/alice/memories/{memory_id}").json()
    assert got["id"] == memory_id and got["user_id"] == "alice"
    listed = c.get("/v1/users/alice/memories", params=[("memory_type", "semantic"), ("memory_type", "episodic")])
    assert listed.status_code == 200
    assert {m["memory_type"] for m in listed.json()} <= {"semantic", "episodic"}
    assert memory_id in {m["id"] for m in listed.json()}

    updated = c.patch(f"/v1/users/alice/memories/{memory_id}", json={"fields": {"summary": "Tom flies airliners"}})
    assert updated.status_code == 200 and updated.json()["summary"] == "Tom flies airliners"
    assert updated.json()["id"] == memory_id
    history = c.get(f"/v1/users/alice/memories/{memory_id}/history").json()
    assert [e["operation"] for e in history] == ["insert", "update"]
    assert history[-1]["actor"] == "rest" and history[-1]["after"]["summary"] == "Tom flies airliners"

    deleted = c.delete(f"/v1/users/alice/memories/{memory_id}")
    assert deleted.status_code == 200 and [(ch["operation"], ch["memory_id"]) for ch in deleted.json()] == [
        ("delete", memory_id)]
    gone = c.get(f"/v1/users/alice/memories/{memory_id}")
    assert gone.status_code == 404 and gone.json()["error"] == "not_found"
    assert c.delete(f"/v1/users/alice/memories/{memory_id}").status_code == 404
    assert [e["operation"] for e in c.get(f"/v1/users/alice/memories/{memory_id}/history").json()][-1] == "delete"


def test_an_add_with_an_expiry_and_a_memory_given_one(live):
    c = live.client(live.alice)
    r = c.post("/v1/users/alice/memories", json={"content": "My parking spot this week is P3-17.", "wait": True,
                                                 "expires_at": "2030-01-31T18:00:00+01:00"})
    assert r.status_code == 200, r.text
    hits = c.post("/v1/users/alice/search", json={"query": "parking spot"}).json()
    episode = next(h["memory"] for h in hits if h["memory"]["memory_type"] == "episodic")
    assert episode["expires_at"] == "2030-01-31T17:00:00Z"
    memory_id = episode["id"]
    cleared = c.patch(f"/v1/users/alice/memories/{memory_id}", json={"fields": {"expires_at": None}})
    assert cleared.status_code == 200 and cleared.json()["expires_at"] is None
    past = c.patch(f"/v1/users/alice/memories/{memory_id}", json={"fields": {"expires_at": "2001-01-01T00:00:00Z"}})
    assert past.status_code == 422 and "not in the future" in past.json()["message"]
    assert c.get(f"/v1/users/alice/memories/{memory_id}").json()["expires_at"] is None


def test_chat_and_context(live):
    c = live.client(live.alice)
    c.post("/v1/users/alice/memories", json={"content": "My dog Rex loves the beach.", "wait": True})
    chat = c.post("/v1/users/alice/chat", json={"message": "What does Rex love?", "remember": False})
    assert chat.status_code == 200
    body = chat.json()
    assert body["mode"] == "offline" and "Rex" in body["answer"] and body["memory_ids"]
    assert body["update_input_ids"] == []
    ctx = c.post("/v1/users/alice/context", json={"message": "Tell me about Rex"}).json()
    assert "Rex" in ctx["topics"] and any("Rex" in h["text"] for h in ctx["hits"])


def test_core_memory_endpoints(live):
    c = live.client(live.alice)
    user = "alice"
    assert c.put(f"/v1/users/{user}/core/persona", json={"value": "A helpful assistant."}).status_code == 200
    r = c.post(f"/v1/users/{user}/core/human/append", json={"text": "Likes tea."})
    assert r.status_code == 200 and "Likes tea." in r.json()["value"]
    core = c.get(f"/v1/users/{user}/core").json()
    assert core["persona"]["value"] == "A helpful assistant." and "Likes tea." in core["human"]["value"]
    full = c.post(f"/v1/users/{user}/core/human/append", json={"text": "x" * 6000})
    assert full.status_code == 409 and full.json()["error"] == "core_memory_full"
    assert c.put(f"/v1/users/{user}/core/nonsense", json={"value": "x"}).status_code == 422


def test_tenancy_keys_never_cross_users(live):
    alice, bob, anon = live.client(live.alice), live.client(live.bob), live.client(None)
    bob.post("/v1/users/bob/memories", json={"content": "Bob's locker code story: I keep snacks there.", "wait": True})
    bob_memory = bob.get("/v1/users/bob/memories").json()[0]["id"]
    alice_memory = alice.post("/v1/users/alice/memories",
                              json={"content": "Alice likes kayaking.", "wait": True}).json()["changes"][0]["memory_id"]

    # another user's routes: 403, whatever the method
    for method, path, body in [
        ("GET", "/v1/users/bob/memories", None),
        ("POST", "/v1/users/bob/search", {"query": "snacks"}),
        ("POST", "/v1/users/bob/memories", {"content": "planted"}),
        ("GET", f"/v1/users/bob/memories/{bob_memory}", None),
        ("PATCH", f"/v1/users/bob/memories/{bob_memory}", {"fields": {"summary": "changed"}}),
        ("DELETE", f"/v1/users/bob/memories/{bob_memory}", None),
        ("GET", "/v1/users/bob/core", None),
        ("DELETE", "/v1/users/bob", None),
        ("GET", "/v1/stats", None),
        ("GET", "/v1/keys", None),
    ]:
        r = alice.request(method, path, json=body)
        assert r.status_code == 403, (method, path, r.status_code)
        assert r.json()["error"] == "forbidden"
    # another user's memory id under one's own user: not found, and untouched
    assert alice.get(f"/v1/users/alice/memories/{bob_memory}").status_code == 404
    assert alice.patch(f"/v1/users/alice/memories/{bob_memory}", json={"fields": {"summary": "x"}}).status_code == 404
    assert alice.delete(f"/v1/users/alice/memories/{bob_memory}").status_code == 404
    assert alice.get(f"/v1/users/alice/memories/{bob_memory}/history").status_code == 404
    assert "snacks" in bob.get(f"/v1/users/bob/memories/{bob_memory}").json()["summary"]
    assert all("snacks" not in h["text"] for h in alice.post("/v1/users/alice/search", json={"query": "snacks"}).json())
    # bob's key holds two users
    assert bob.get("/v1/users/carol/memories").status_code == 200
    assert bob.get(f"/v1/users/alice/memories/{alice_memory}").status_code == 403
    assert bob.get("/v1/users").json() == {"users": ["bob", "carol"], "all_users": False}
    # an input id of another user is not found
    pending = bob.post("/v1/users/bob/memories", json={"content": "Bob's note."}).json()["input_ids"][0]
    assert alice.get(f"/v1/users/alice/inputs/{pending}").status_code == 404

    # no key, wrong key, malformed header: 401
    for headers in ({}, {"Authorization": "Bearer mxk_deadbeef.nope"}, {"Authorization": "Basic abc"},
                    {"X-API-Key": live.alice + "x"}):
        r = anon.get("/v1/users/alice/memories", headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", headers
    assert anon.get("/v1/users/alice/memories", headers={"X-API-Key": live.alice}).status_code == 200


def test_admin_creates_and_revokes_keys(live):
    admin = live.client(live.admin)
    user = _uid()
    created = admin.post("/v1/keys", json={"users": [user], "name": "temp"})
    assert created.status_code == 201
    key, info = created.json()["key"], created.json()["info"]
    assert key.startswith("mxk_") and info["users"] == [user] and "key" not in info
    listed = admin.get("/v1/keys").json()
    assert info["id"] in {k["id"] for k in listed} and all("hash" not in str(k) for k in listed)

    temp = live.client(key)
    assert temp.post(f"/v1/users/{user}/memories", json={"content": "temp key works", "wait": True}).status_code == 200
    assert temp.get("/v1/me").json() == {"key_id": info["id"], "users": [user], "admin": False}
    assert temp.post("/v1/keys", json={"users": ["*"]}).status_code == 403  # not an admin: cannot mint keys
    assert admin.delete(f"/v1/keys/{info['id']}").status_code == 204
    assert temp.get(f"/v1/users/{user}/memories").status_code == 401
    assert admin.delete(f"/v1/keys/{info['id']}").status_code == 404
    # the admin key acts for every user and lists users with data
    assert user in admin.get("/v1/users").json()["users"]
    assert admin.get("/v1/stats").status_code == 200 and "data_dir" not in admin.get("/v1/stats").json()


def test_an_admin_key_of_some_users_manages_only_their_keys(live):
    ops = live.client(live.admin)
    ada, bob = _uid("ada"), _uid("bob")
    bobs = ops.post("/v1/keys", json={"users": [bob], "name": "bob's"}).json()["info"]
    ops.post(f"/v1/users/{bob}/memories", json={"content": "Bob keeps bees on the roof.", "wait": True})
    lead = live.client(ops.post("/v1/keys", json={"users": [ada], "admin": True}).json()["key"])

    assert lead.post("/v1/keys", json={"users": ["*"]}).status_code == 403
    assert lead.post("/v1/keys", json={"users": [ada, bob]}).status_code == 403
    mine = lead.post("/v1/keys", json={"users": [ada], "name": "ada's"})
    assert mine.status_code == 201
    listed = {k["id"] for k in lead.get("/v1/keys").json()}
    assert mine.json()["info"]["id"] in listed and bobs["id"] not in listed
    assert lead.delete(f"/v1/keys/{bobs['id']}").status_code == 404  # not told it exists
    assert lead.post("/reset").status_code == 403
    # nothing of bob's changed
    assert bobs["id"] in {k["id"] for k in ops.get("/v1/keys").json()}
    assert len(ops.get(f"/v1/users/{bob}/memories").json()) >= 1
    assert lead.delete(f"/v1/keys/{mine.json()['info']['id']}").status_code == 204


def test_delete_user_removes_everything(live):
    admin = live.client(live.admin)
    user = _uid("gone")
    admin.post(f"/v1/users/{user}/memories", json={"content": "My cat Miso sleeps all day.", "wait": True})
    assert admin.get(f"/v1/users/{user}/memories").json()
    r = admin.delete(f"/v1/users/{user}")
    assert r.status_code == 200 and r.json()["deleted"]["memories"] >= 1 and r.json()["deleted"]["inputs"] == 1
    assert admin.get(f"/v1/users/{user}/memories").json() == []
    assert admin.post(f"/v1/users/{user}/search", json={"query": "Miso"}).json() == []


def test_stats_per_user(live):
    c = live.client(live.alice)
    stats = c.get("/v1/users/alice/stats").json()
    assert stats["mode"] == "offline" and stats["memories"] and "data_dir" not in stats


@pytest.mark.parametrize("method,path,body,status", [
    ("POST", "/v1/users/alice/memories", {"content": ""}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "   "}, 422),
    ("POST", "/v1/users/alice/memories", {"content": []}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "x\x00y"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "x\x9by"}, 422),  # a C1 control (CSI), as the SDK refuses it
    ("POST", "/v1/users/alice/memories", {"content": [{"role": "user", "name": "Bo\x85", "content": "hi"}]}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x\x9by"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "occurred_at": "2024-05-01T10:00:00"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "occurred_at": "yesterday-ish"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "occurred_at": "9999-12-31T23:59:59-23:59"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": [{"role": "robot", "content": "x"}]}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "surprise": 1}, 422),
    ("POST", "/v1/users/alice/memories", {"content": 42}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "expires_at": "2030-01-01T00:00:00"}, 422),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "expires_at": "2001-01-01T00:00:00+00:00"}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x", "limit": 0}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x", "limit": 10 ** 20}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x", "memory_types": ["dreams"]}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x", "method": "magic"}, 422),
    ("POST", "/v1/users/alice/search", {"query": "x", "start": "2024-01-01T00:00:00"}, 422),
    ("POST", "/v1/users/alice/chat", {"message": ""}, 422),
    ("PATCH", "/v1/users/alice/memories/sem_0", {"fields": {}}, 422),
    ("PATCH", "/v1/users/alice/memories/sem_0", {"fields": {"summary": "x"}}, 404),
    ("GET", "/v1/users/alice/memories?limit=0", None, 422),
    ("GET", "/v1/users/alice/memories?limit=99999999999999999999", None, 422),
    ("GET", "/v1/users/alice/memories?memory_type=dreams", None, 422),
    ("GET", "/v1/users/alice/memories/sem%20x%3Cb%3E", None, 422),
    ("GET", "/v1/users/alice/inputs/in_nope", None, 404),
    ("GET", "/v1/users/alice/memories/epi_00000000000000000000000000000000", None, 404),
    ("PUT", "/v1/users/alice/core/persona", {"value": "x" * 6000}, 409),
    ("POST", "/v1/users/alice/memories", {"content": "hi", "occurred_at": "0001-01-01T00:00:00+00:00"}, 422),
    ("POST", "/v1/users/%FE/memories", {"content": "hi"}, 422),  # not UTF-8: read as U+FFFD, as %FF would be
    ("GET", "/v1/users/%FF/memories", None, 422),
    ("POST", "/memories", {"messages": [{"role": "user", "content": "hi"}], "user_id": ".."}, 400),
    ("POST", "/memories", {"messages": [{"role": "user", "content": "hi"}], "user_id": "alice",
                           "metadata": {"k": "\u0000"}}, 422),
    ("POST", "/memories", {"messages": [{"role": "user", "content": "hi"}], "user_id": "alice", "agent_id": "\u0000"},
     422),
    ("POST", "/search", {"query": "hi", "user_id": "alice", "filters": {"k": "\u0000"}}, 422),
])
def test_bad_input_is_4xx_with_a_message(live, method, path, body, status):
    c = live.client(live.alice)
    r = c.request(method, path, json=body) if body is not None else c.request(method, path)
    assert r.status_code == status, r.text
    assert r.json()["message"], r.text


def test_bad_raw_bodies(live):
    c = live.client(live.alice)
    headers = {"content-type": "application/json"}
    for raw in (b"{", b"null", b"[]", b'"text"', b"\xff\xfe", b'{"content": NaN}', b'{"content": "\\ud800"}',
                b'{"content": [{"content": "a\\udfffb"}]}', b'{"content": [{"content": "a", "name": "\\u0000"}]}'):
        r = c.post("/v1/users/alice/memories", content=raw, headers=headers)
        assert r.status_code == 422, (raw, r.status_code, r.text)
        assert r.json()["message"]
    r = c.post("/v1/users/alice/memories", content=b"content=hi", headers={"content-type": "text/plain"})
    assert r.status_code == 422


def test_body_and_upload_limits(live):
    c = live.client(live.alice)
    big = {"content": "word " * 300_000}  # 1.5 MB of JSON
    r = c.post("/v1/users/alice/memories", json=big)
    assert r.status_code == 413 and r.json()["error"] == "too_large"

    def chunks():  # no Content-Length: counted as it streams
        for _ in range(40):
            yield b"x" * 65536

    r = c.post("/v1/users/alice/memories", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = c.post("/v1/users/alice/screenshots", files={"image": ("big.png", b"\x89PNG" + b"0" * (21 << 20), "image/png")})
    assert r.status_code == 413
    # under the limit but over the engine's max_input_chars: refused with a message
    r = c.post("/v1/users/alice/memories", json={"content": "y" * 200_001})
    assert r.status_code == 422 and "limit" in r.json()["message"]


def test_screenshot_upload(live):
    """Multipart upload: OCR, memories, the input's status; a repeat is a duplicate; a bad image is 422."""
    import io

    from PIL import Image, ImageDraw

    anon, c = live.client(None), live.client(live.alice)
    from mirix_synth.screens import _font

    image = Image.new("RGB", (900, 220), "white")
    ImageDraw.Draw(image).text((20, 80), "Quarterly report: revenue up 12 percent", fill="black", font=_font(36))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    files = {"image": ("shot.png", buf.getvalue(), "image/png")}
    form = {"captured_at": "2024-05-01T10:00:00+00:00", "app": "Excel", "window_title": "Q2.xlsx", "wait": "true"}
    assert anon.post("/v1/users/alice/screenshots", files=files, data=form).status_code == 401
    assert c.post("/v1/users/bob/screenshots", files=files, data=form).status_code == 403
    r = c.post("/v1/users/alice/screenshots", files=files, data=form)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "processed" and body["input_ids"] and body["frame"]["app"] == "Excel"
    hits = c.post("/v1/users/alice/search", json={"query": "quarterly revenue report", "limit": 5}).json()
    assert any(body["input_ids"][0] in h["memory"]["source_ids"] for h in hits), hits
    status = c.get(f"/v1/users/alice/inputs/{body['input_ids'][0]}").json()
    assert status["kind"] == "screenshot" and status["metadata"].get("app") == "Excel"
    # the same frame again: recognised as a repeat, nothing new written
    again = c.post("/v1/users/alice/screenshots", files=files, data=form).json()
    assert again["input_ids"] == [] and again["frame"]["status"] == "duplicate"
    other = Image.new("RGB", (900, 220), "white")
    ImageDraw.Draw(other).text((20, 80), "Travel plan: flight to Oslo on Friday", fill="black", font=_font(36))
    buf = io.BytesIO()
    other.save(buf, format="PNG")
    queued = c.post("/v1/users/alice/screenshots", files={"image": ("b.png", buf.getvalue(), "image/png")},
                    data={**form, "wait": "false", "window_title": "Trips"})
    assert queued.status_code == 202, queued.text
    assert queued.json()["status"] == "pending" and queued.json()["input_ids"], queued.json()
    bad = c.post("/v1/users/alice/screenshots", files={"image": ("x.png", b"not an image", "image/png")}, data=form)
    assert bad.status_code == 422 and " at 0x" not in bad.json()["message"]
    missing = c.post("/v1/users/alice/screenshots", data=form)
    assert missing.status_code == 422
    # a format the engine does not take is refused as it is by the SDK, not read by the route itself
    pcx = io.BytesIO()
    other.save(pcx, format="PCX")
    refused = c.post("/v1/users/alice/screenshots", files={"image": ("x.pcx", pcx.getvalue(), "image/x-pcx")},
                     data={**form, "window_title": "PCX"})
    assert refused.status_code == 422 and "PCX images are not supported" in refused.json()["message"]


def test_a_frame_gets_the_same_answer_over_rest_as_from_the_sdk(live):
    """A PNG whose end chunk is cut off (its pixels whole) was read by the SDK and refused by REST
    (`verify`); one cut inside its pixels is refused by both."""
    import io

    from PIL import Image, ImageDraw

    from mirix_synth.screens import _font

    image = Image.new("RGB", (900, 220), "white")
    ImageDraw.Draw(image).text((20, 80), "Garden plan: tulips along the fence", fill="black", font=_font(36))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    whole = buf.getvalue()
    c = live.client(live.alice)
    form = {"captured_at": "2024-05-01T10:00:00+00:00", "app": "Notes", "window_title": "Garden", "wait": "true"}
    cut_end = c.post("/v1/users/alice/screenshots", files={"image": ("a.png", whole[:-20], "image/png")}, data=form)
    assert cut_end.status_code == 200 and cut_end.json()["status"] == "processed", cut_end.text
    cut_pixels = c.post("/v1/users/alice/screenshots", files={"image": ("b.png", whole[:len(whole) // 2], "image/png")},
                        data={**form, "window_title": "Garden 2"})
    assert cut_pixels.status_code == 422 and "truncated" in cut_pixels.json()["message"], cut_pixels.text


def test_a_secret_in_a_window_title_is_a_placeholder_wherever_it_is_shown(live):
    import io

    from PIL import Image, ImageDraw

    from mirix_synth.screens import _font

    c = live.client(live.alice)
    image = Image.new("RGB", (900, 220), "white")
    ImageDraw.Draw(image).text((20, 80), "Billing settings and invoices", fill="black", font=_font(36))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    key = "sk_live_51HqLw9Xe4Rt6Yu1Io3Pa5Sd8FgZx"
    r = c.post("/v1/users/alice/screenshots", files={"image": ("s.png", buf.getvalue(), "image/png")},
               data={"app": "Stripe", "window_title": f"API key {key} - Stripe", "wait": "true"})
    assert r.status_code == 200, r.text
    input_id = r.json()["input_ids"][0]
    for path in (f"/v1/users/alice/inputs/{input_id}", "/v1/users/alice/inputs", "/v1/users/alice/screen-activity"):
        shown = c.get(path)
        assert shown.status_code == 200 and key not in shown.text and "Stripe" in shown.text, (path, shown.text[:300])


def test_a_server_without_tesseract_answers_503_and_writes_nothing(live_without_tesseract):
    """DependencyMissing (here TesseractMissing) is the server's problem, not the caller's: 503, not 422."""
    import io

    from PIL import Image

    live = live_without_tesseract
    buf = io.BytesIO()
    Image.new("RGB", (320, 200), "white").save(buf, format="PNG")
    r = live.client(live.alice).post("/v1/users/alice/screenshots", data={"wait": "true"},
                                     files={"image": ("a.png", buf.getvalue(), "image/png")})
    assert r.status_code == 503, r.text
    assert r.json()["error"] == "unavailable" and "tesseract-ocr" in r.json()["message"]
    assert sum(live.mx.stats(user_id="alice")["memories"].values()) == 0
    assert live.mx.inputs.by_status("pending") == []
