"""`/health` states, with no key, the longest add the server takes and its largest JSON body; a
`MirixClient` reads them once, when first asked, as `max_input_chars`: the longest add it can send,
the server's limit or fewer when the body limit would refuse that much text first."""

from __future__ import annotations

import httpx
import pytest

from mirix_py.client import ApiError, MirixClient
from mirix_py.errors import InvalidInput
from mirix_py.server import Limits


@pytest.fixture
def start_server(tmp_path, embedder, monkeypatch, live_server_factory):
    """Starts a server over an engine whose inputs are at most 1,000 characters (app options as given)."""
    monkeypatch.setenv("MIRIX_MAX_INPUT_CHARS", "1000")
    started = []

    def start(**app_kwargs):
        server, live = live_server_factory(tmp_path / f"server-{len(started)}", embedder, **app_kwargs)
        started.append((server, live))
        return live

    yield start
    for server, live in started:
        for c in live.clients:
            c.close()
        server.__exit__()
        live.mx.close()


def test_health_states_the_input_and_body_limits_without_a_key(start_server):
    live = start_server(limits=Limits(max_body=50_000))
    health = live.client(None).get("/health")
    assert health.status_code == 200
    assert health.json()["max_input_chars"] == 1000 and health.json()["max_body_bytes"] == 50_000


def test_a_client_learns_the_servers_input_limit_once_when_first_asked(start_server):
    live = start_server()
    asked = []
    http = httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {live.alice}"},
                        event_hooks={"request": [lambda request: asked.append(request.url.path)]})
    with MirixClient(live.url, http=http) as client:
        assert asked == []  # nothing is asked before it is needed
        assert client.max_input_chars == client.max_input_chars == 1000
        assert asked == ["/health"]
        client.add("a" * client.max_input_chars, user_id="alice")  # the longest it says is taken
        with pytest.raises(InvalidInput, match="over the limit of 1000"):
            client.add("a" * (client.max_input_chars + 1), user_id="alice")
    with MirixClient(live.url) as anonymous:  # no key needed
        assert anonymous.max_input_chars == 1000


def test_a_body_limit_that_refuses_first_makes_the_clients_limit_the_smaller(start_server):
    live = start_server(limits=Limits(max_body=2000))
    widest = "\U0001F600"  # 4 bytes of UTF-8 in the JSON body: the most one character takes
    with MirixClient(live.url, api_key=live.alice) as client:
        with pytest.raises(ApiError, match="413 too_large"):  # within the input limit, over the body limit
            client.add(widest * 1000, user_id="alice")
        assert client.max_input_chars == 400 < 1000
        client.add(widest * client.max_input_chars, user_id="alice")


def test_a_server_that_does_not_state_its_limits_is_taken_to_have_the_default():
    older = httpx.MockTransport(lambda request: httpx.Response(200, json={"status": "ok", "version": "0.9.0"}))
    with MirixClient("http://older", http=httpx.Client(base_url="http://older", transport=older)) as client:
        assert client.max_input_chars == 200_000  # `Settings.max_input_chars` by default
