"""The REST API in one script: serve an engine on loopback, make a key, use it from a client.

    python examples/rest_quickstart.py                 # a temp data dir, offline
    python examples/rest_quickstart.py --url http://127.0.0.1:8000 --key mxk_...   # a running `mirix serve`

With no --url it starts the server itself (uvicorn in a thread, 127.0.0.1, a free port).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import ExitStack

from mirix_py.client import MirixClient


def demo(client: MirixClient, user: str) -> None:
    accepted = client.add("My brother Tom is a pilot for a regional airline.", user_id=user)
    print(f"add accepted: {accepted.status.value}, input {accepted.input_ids[0]}")
    while client.input_status(accepted.input_ids[0], user_id=user)["status"] in ("pending", "processing"):
        time.sleep(0.1)
    done = client.add([{"role": "user", "name": "Ada", "id": "D1:1", "content": "We hiked Mount Rainier in May."}],
                      user_id=user, occurred_at="2024-05-20T09:00:00+00:00", wait=True)
    print(f"add with wait: {done.status.value}, {len(done.changes)} change(s)")
    for hit in client.search("who flies planes", user_id=user, limit=3):
        print(f"  {hit.score:.3f} {hit.memory.memory_type.value:9} {hit.text}")
    answer = client.chat("What does Tom do?", user_id=user, remember=False)
    print("chat:", answer.answer.splitlines()[0], "| cites", ", ".join(answer.memory_ids))
    episode = client.list(user_id=user, memory_types=["episodic"])[0]
    client.update(episode.id, {"summary": episode.summary + " (edited)"}, user_id=user)
    print("history:", [e.operation.value for e in client.history(episode.id, user_id=user)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one here)")
    parser.add_argument("--key", help="its API key")
    parser.add_argument("--user", default="ada")
    args = parser.parse_args()
    with ExitStack() as stack:
        url, key = args.url, args.key
        if url is None:
            from mirix_py.engine import Mirix
            from mirix_py.server import KeyStore, create_app
            from mirix_py.server.thread import ServerThread

            mx = Mirix(tempfile.mkdtemp(prefix="mirix-rest-"))
            stack.callback(mx.close)
            keys = KeyStore(mx.engine)
            key = keys.create([args.user], name="quickstart").key
            url = stack.enter_context(ServerThread(create_app(mx, keys=keys))).url
            print(f"serving on {url} (viewer: {url}/viewer, docs: {url}/docs)")
        client = stack.enter_context(MirixClient(url, api_key=key))
        print("health:", client.health())
        demo(client, args.user)


if __name__ == "__main__":
    main()
