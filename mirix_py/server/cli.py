"""`mirix serve`, `mirix keys ...` and `mirix mcp`: registered on the main `mirix` command.

FastAPI, uvicorn and mcp are imported inside the commands, so the rest of the CLI works without
the `server` extra.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()
err = Console(stderr=True)
LOOPBACK = ("127.0.0.1", "localhost", "::1")

keys_app = typer.Typer(no_args_is_help=True, help="API keys of the REST and MCP servers (stored hashed).")

DataDir = typer.Option(None, "--data-dir", "-d", envvar="MIRIX_DATA_DIR", help="Data directory (default ~/.mirix).")


def _settings(data_dir: Optional[Path]):
    from mirix_py.settings import Settings

    return Settings.from_env(data_dir=data_dir)


def _key_store(data_dir: Optional[Path]):
    """The key table without loading the whole engine (no embedder, no Chroma)."""
    from mirix_py.server.keys import KeyStore
    from mirix_py.store.db import make_engine

    from mirix_py.store.private import private_dir

    settings = _settings(data_dir)
    private_dir(settings.data_dir)
    return KeyStore(make_engine(settings.sql_url, settings.sqlite_driver))


def _need_server_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        err.print("[bold red]error:[/] serving needs the server extra: pip install 'mirix-py[server]'")
        raise typer.Exit(2) from None


@keys_app.command("create")
def keys_create(user: list[str] = typer.Option(..., "--user", "-u", help="A user this key may act for; repeat. "
                                                                            "'*' means every user."),
                name: str = typer.Option("", "--name", help="A label, e.g. who holds the key."),
                admin: bool = typer.Option(False, "--admin", help="May also create, list and revoke keys over REST."),
                data_dir: Optional[Path] = DataDir, as_json: bool = typer.Option(False, "--json")) -> None:
    """Create a key and print it once (only its hash is stored)."""
    from mirix_py.errors import InvalidInput

    try:
        created = _key_store(data_dir).create(user, name=name, admin=admin)
    except InvalidInput as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from exc
    if as_json:
        sys.stdout.write(json.dumps(created.model_dump(mode="json")) + "\n")
        return
    sys.stdout.write(created.key + "\n")
    err.print(f"key [bold]{created.info.id}[/] for {', '.join(created.info.users)}"
              f"{' (admin)' if created.info.admin else ''}: shown once, store it now")


@keys_app.command("list")
def keys_list(include_revoked: bool = typer.Option(False, "--all", help="Also revoked keys."),
              data_dir: Optional[Path] = DataDir, as_json: bool = typer.Option(False, "--json")) -> None:
    """List keys (ids, users, admin); never the keys themselves."""
    infos = _key_store(data_dir).list(include_revoked=include_revoked)
    if as_json:
        sys.stdout.write(json.dumps([i.model_dump(mode="json") for i in infos], indent=2) + "\n")
        return
    table = Table(title=f"{len(infos)} key(s)")
    for col in ("id", "name", "users", "admin", "created", "revoked"):
        table.add_column(col, overflow="fold")
    for i in infos:
        table.add_row(i.id, escape(i.name), escape(", ".join(i.users)), "yes" if i.admin else "",
                      i.created_at.strftime("%Y-%m-%d %H:%M"), i.revoked_at.strftime("%Y-%m-%d %H:%M") if i.revoked_at else "")
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: str = typer.Argument(..., help="The key's id (from `mirix keys list`)."),
                data_dir: Optional[Path] = DataDir) -> None:
    """Revoke a key: it is refused from the next request on."""
    if not _key_store(data_dir).revoke(key_id):
        err.print(f"[bold red]error:[/] no active key {escape(key_id)!r}")
        raise typer.Exit(2)
    console.print(f"revoked {key_id}")


def serve(host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
          port: int = typer.Option(8000, help="Port."),
          data_dir: Optional[Path] = DataDir,
          no_auth: bool = typer.Option(False, "--no-auth", help="Serve without API keys (loopback only)."),
          mcp: bool = typer.Option(True, "--mcp/--no-mcp", help="Also serve MCP (streamable HTTP, the same keys) at "
                                                               "/mcp."),
          max_body: int = typer.Option(1 << 20, help="Largest JSON body in bytes."),
          max_upload: int = typer.Option(20 << 20, help="Largest screenshot upload in bytes."),
          workers_threads: int = typer.Option(40, "--threads", help="Threads for engine calls."),
          log_level: str = typer.Option("info")) -> None:
    """Serve the REST API, the OpenAPI spec (/docs), the memory viewer (/viewer) and MCP (/mcp).

    The server is the one process writing an embedded store: `mirix mcp` started later sends its
    calls here (it finds the server in the data dir's server.json), other writers are refused."""
    _need_server_extra()
    if no_auth and host not in LOOPBACK:
        err.print("[bold red]error:[/] --no-auth is allowed on a loopback address only")
        raise typer.Exit(2)
    import uvicorn

    from mirix_py.server import Limits, create_app
    from mirix_py.server.keys import KeyStore
    from mirix_py.server.thread import AnnouncingServer

    mx = _open_writer(data_dir)
    keys = KeyStore(mx.engine)
    if not no_auth and not keys.list():
        err.print("[yellow]no API keys yet: create one with[/] mirix keys create --user USER")
    app = create_app(mx, keys=keys, auth=not no_auth, mcp=mcp, threads=workers_threads,
                     limits=Limits(max_body=max_body, max_upload=max_upload), mcp_host=host, mcp_port=port)
    err.print(f"mirix serving on http://{host}:{port}  (viewer: /viewer, API docs: /docs"
              f"{', MCP: /mcp' if mcp else ''}; mode {mx.mode})")
    announce = _announcer(mx.settings.data_dir, keys.session_key())
    try:
        AnnouncingServer(uvicorn.Config(app, host=host, port=port, log_level=log_level), announce,
                         announce.remove).run()
    finally:
        announce.remove()
        mx.close()


def _open_writer(data_dir: Optional[Path]):
    """The engine, holding the data dir's writer lock; exit 2 with who holds it otherwise."""
    from mirix_py.engine import Mirix
    from mirix_py.store.writer_lock import StoreBusy

    try:
        return Mirix(settings=_settings(data_dir))
    except StoreBusy as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None


class _announcer:
    """Writes the data dir's server.json once the server listens (`store/discovery.py`), so that
    `mirix mcp` on the same data dir talks to this process; `remove()` on the way out."""

    def __init__(self, data_dir: Path, key: str) -> None:
        self.data_dir, self.key = data_dir, key
        self.pid: int | None = None

    def __call__(self, host: str, port: int) -> None:
        import os

        from mirix_py.store import discovery
        from mirix_py.store.writer_lock import process_label

        info = discovery.ServerInfo(url=discovery.local_url(host, port), pid=os.getpid(), started_at=discovery.now(),
                                    key=self.key, process=process_label())
        discovery.write_server_info(self.data_dir, info)
        self.pid = info.pid

    def remove(self) -> None:
        from mirix_py.store import discovery

        if self.pid is not None:
            discovery.remove_server_info(self.data_dir, self.pid)


def mcp(transport: str = typer.Option("stdio", help="stdio | http"),
        user: Optional[list[str]] = typer.Option(None, "--user", "-u",
                                                 help="User(s) the server acts for (stdio, or http with --no-auth)."),
        host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8765),
        no_auth: bool = typer.Option(False, "--no-auth", help="HTTP without API keys (loopback only)."),
        data_dir: Optional[Path] = DataDir) -> None:
    """Serve memory to MCP clients (Claude Desktop, IDEs, agents) over stdio or streamable HTTP.

    Over stdio, when `mirix serve` (or `mirix assistant`) runs on the same data dir, the tool calls
    go to that server, so it sees every write; otherwise this process opens the store itself."""
    try:
        from mirix_py.integrations import mcp_server
    except ImportError:
        err.print("[bold red]error:[/] MCP needs the server extra: pip install 'mirix-py[server]'")
        raise typer.Exit(2) from None
    if transport not in ("stdio", "http"):
        err.print("[bold red]error:[/] --transport is stdio or http")
        raise typer.Exit(2)
    if (transport == "stdio" or no_auth) and not user:
        err.print("[bold red]error:[/] say which user(s) this server acts for: --user USER")
        raise typer.Exit(2)
    if no_auth and host not in LOOPBACK:
        err.print("[bold red]error:[/] --no-auth is allowed on a loopback address only")
        raise typer.Exit(2)
    from mirix_py.server.keys import KeyStore

    if transport == "stdio" and _stdio_through_server(data_dir, user or []):
        return
    mx = _open_writer(data_dir)
    try:
        keys = None if (transport == "stdio" or no_auth) else KeyStore(mx.engine)
        mcp_server.run(mx, transport="stdio" if transport == "stdio" else "http", users=user, keys=keys,
                       host=host, port=port)
    finally:
        mx.close()


def _stdio_through_server(data_dir: Optional[Path], users: list[str]) -> bool:
    """Serve MCP over stdio with a running server's REST API as the backend; False when none runs."""
    from mirix_py.client import MirixClient
    from mirix_py.integrations.mcp_remote import RemoteMemory
    from mirix_py.integrations.mcp_server import build_mcp_server
    from mirix_py.store.discovery import running_server

    server = running_server(_settings(data_dir).data_dir)
    if server is None:
        return False
    err.print(f"mirix mcp: using the server at {server.url} (pid {server.pid}) for this data dir", soft_wrap=True)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # stderr is the client's log: no line per call
    remote = RemoteMemory(MirixClient(server.url, api_key=server.key, timeout=300))
    try:
        build_mcp_server(remote, users=users).run("stdio")
    finally:
        remote.close()
    return True


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
    app.command("serve")(serve)
    app.command("mcp")(mcp)
