"""Run the app with uvicorn in a background thread: for tests, notebooks and embedding the server
in another program. Binds 127.0.0.1 and a free port unless told otherwise.

    with ServerThread(create_app(mx)) as server:
        httpx.get(server.url + "/health")
"""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that calls `on_listening(host, port)` once its sockets accept connections (a
    lifespan hook runs before they are bound) and `on_stopped()` when it has shut down (uvicorn
    raises a caught SIGTERM again after that, so code after `run()` may never run): `mirix serve`
    writes and removes its `server.json` then."""

    def __init__(self, config: uvicorn.Config, on_listening: Any, on_stopped: Any) -> None:
        super().__init__(config)
        self.on_listening, self.on_stopped = on_listening, on_stopped

    async def shutdown(self, sockets: Any = None) -> None:
        try:
            await super().shutdown(sockets)
        finally:
            self.on_stopped()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started and self.servers:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            self.on_listening(host, port)


class ServerThread:
    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning",
                 **config: Any) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                                    lifespan="on", **config))
        self.thread = threading.Thread(target=self.server.run, name="mirix-uvicorn", daemon=True)
        self.url = ""

    def start(self, timeout: float = 30.0) -> "ServerThread":
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def stop(self, timeout: float = 15.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=timeout)

    def __enter__(self) -> "ServerThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
