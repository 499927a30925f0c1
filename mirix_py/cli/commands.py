"""The `mirix` command: add, search, list, show, export, import, schemas export, demo, stats, eval."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.highlighter import JSONHighlighter
from rich.markup import escape
from rich.table import Table

from mirix_py.errors import InvalidInput, MirixError
from mirix_py.records import to_jsonable
from mirix_py.secrets.redaction import scrub
from mirix_py.text.storable import terminal_safe

app = typer.Typer(add_completion=False, no_args_is_help=True, help="mirix-py: a memory engine for LLM agents.")
schemas_app = typer.Typer(no_args_is_help=True, help="JSON Schema files of the public records.")
app.add_typer(schemas_app, name="schemas")

from mirix_py.server.cli import register as _register_server_commands  # noqa: E402  (serve, keys, mcp)

_register_server_commands(app)

from mirix_py.ingest.cli import register as _register_screenshot_commands  # noqa: E402  (ingest-screenshots, capture)

_register_screenshot_commands(app, open_engine=lambda data_dir, create=False: _engine(data_dir, create=create))

from mirix_py.eval.cli import register as _register_eval_commands  # noqa: E402  (eval locomo, eval screenshots)

_register_eval_commands(app)

from mirix_py.cli.migrate_vectors import register as _register_vector_migration  # noqa: E402  (migrate-vectors)


def _pgvector_engine(data_dir: Optional[Path]):
    from mirix_py.engine import Mirix

    return Mirix(data_dir, vector_store="pgvector", resume=False)


_register_vector_migration(app, open_engine=_pgvector_engine)

console = Console()
err = Console(stderr=True)

DataDir = typer.Option(None, "--data-dir", "-d", envvar="MIRIX_DATA_DIR", help="Data directory (default ~/.mirix).")
User = typer.Option(..., "--user", "-u", help="User id the memories belong to.")
AsJson = typer.Option(False, "--json", help="Print JSON for scripts.")


Create = typer.Option(False, "--create", help="Start a new store if the data directory does not exist.")


def _engine(data_dir: Optional[Path], *, create: bool = False, write: bool = True, forward: bool = False):
    """The engine on `data_dir`. A directory named (by -d or MIRIX_DATA_DIR) that does not exist is
    an error unless `create`: a mistyped path must not silently start an empty store with a new key.
    `write=False` (commands that only read) opens an embedded store beside the process writing it
    (`mirix serve`, say) instead of asking for its writer lock; a writer is refused with who holds it,
    unless `forward` and the holder is a server: then the calls go to it (`mirix_py/cli/remote.py`).
    A data dir a restore did not finish is refused with what to do (it holds part of the backup)."""
    from mirix_py.engine import Mirix
    from mirix_py.facade.maintenance import unfinished_restore
    from mirix_py.settings import default_data_dir
    from mirix_py.store.writer_lock import StoreBusy

    if data_dir is not None and not data_dir.exists() and not create:
        _fail(FileNotFoundError(f"data directory {data_dir} does not exist (a typo?); pass --create to start "
                                "a new store there"))
    if data_dir is not None and data_dir.exists() and not data_dir.is_dir():
        _fail(NotADirectoryError(f"data directory {data_dir} is a file, not a directory"))
    unfinished = unfinished_restore(data_dir or default_data_dir())
    if unfinished is not None:
        _fail(InvalidInput(unfinished.advice(data_dir or default_data_dir())))
    try:
        return Mirix(data_dir, lock=write)
    except StoreBusy as exc:
        if forward:
            from mirix_py.cli.remote import server_writer

            writer = server_writer(data_dir)
            if writer is not None:
                err.print(f"sent to the server that owns this data dir: {writer.info.url} (pid {writer.info.pid})",
                          soft_wrap=True)
                return writer
        _fail(exc)
    except MirixError as exc:  # a store this engine may not open (another vault key, say): said, not a traceback
        _fail(exc)


def _arg(parse, *args, **kwargs):
    """A parsed argument, or exit 2 with the parser's message."""
    try:
        return parse(*args, **kwargs)
    except MirixError as exc:
        _fail(exc)


def _shown(text: str) -> str:
    """Stored text as the terminal is handed it: its control characters written out, not run
    (`terminal_safe`; rich's `escape` leaves an ESC as it is), and no rich markup."""
    return escape(terminal_safe(text))


def _fail(exc: Exception) -> None:
    err.print(f"[bold red]error:[/] {_shown(scrub(str(exc)))}", soft_wrap=True)  # one line: scripts grep it
    raise typer.Exit(2)


_dump = to_jsonable  # one conversion for every JSON surface (mirix_py.records)


# What `json.dumps` leaves raw in a string but a terminal may run: DEL and the C1 controls (CSI is one)
_JSON_CONTROL = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}


def _json_text(obj: Any) -> str:
    """`obj` as indented JSON that reads back as it is, with no control character a terminal would run."""
    return json.dumps(_dump(obj), indent=2, ensure_ascii=False).translate(_JSON_CONTROL)


def _print_json(obj: Any) -> None:
    sys.stdout.write(_json_text(obj) + "\n")


# How a time typed without a zone is read (`cli.args.local_when`), in the help of every option taking one
NO_ZONE = ("without a zone: in MIRIX_TIMEZONE, else this machine's zone; a wall time the clocks skip takes "
           "the offset before the change (02:30 the night they spring forward is 03:30 summer time), one they "
           "repeat is its first occurrence")


def _typed_zone():
    """The zone a time typed without one is read in: the one tables show times in (MIRIX_TIMEZONE, which
    the engine's settings read, else this machine's); an unknown name exits 2 with the message."""
    from mirix_py.cli.args import typed_zone

    return _arg(typed_zone, os.environ.get("MIRIX_TIMEZONE"))


def _zone(mx):
    """The zone times are shown in: `MIRIX_TIMEZONE`, else this machine's (`mirix_py.boundary.timezones`)."""
    from mirix_py.boundary.timezones import display_zone

    return display_zone(mx.settings.timezone)


def _memory_table(memories, title: str, scores: list[float | None] | None = None, zone=None) -> Table:
    """Times in `zone` (default: this machine's), the zone named in the header and each cell; a score of
    None marks a turn given as context of the match above it."""
    from mirix_py.boundary.timezones import display_zone, local_when, shown_text, zone_name

    zone = zone or display_zone()
    table = Table(title=title, caption=f"times in {zone_name(zone)}", show_lines=False, expand=True)
    if scores is not None:
        table.add_column("score", justify="right", width=7)
    table.add_column("type", width=10)
    table.add_column("id", overflow="fold", width=16)
    table.add_column("when", width=20)
    table.add_column("text", overflow="fold", ratio=1)
    for i, memory in enumerate(memories):
        when = local_when(memory.occurred_at, zone)
        row = [memory.memory_type.value, memory.id, when,
               _shown(shown_text(memory.search_text(), memory.occurred_at, zone))]
        if scores is not None:
            score = scores[i]
            row.insert(0, "context" if score is None else f"{score:.3f}")
        table.add_row(*row)
    return table


@app.command()
def add(text: str = typer.Argument(None, help="Text to remember; '-' or nothing reads stdin."),
        user: str = User,
        occurred_at: Optional[str] = typer.Option(None, help=f"ISO 8601 time ({NO_ZONE})."),
        source_id: Optional[str] = typer.Option(None, help="Caller id kept as provenance (not in_ and 32 hex digits, an input id's form)."),
        messages: bool = typer.Option(False, "--messages", help="The input is a JSON list of chat messages "
                                      '([{"role": "user", "name": "Ada", "content": "..."}]); such a list is '
                                      "recognised without this flag too."),
        expires_at: Optional[str] = typer.Option(None, help=f"ISO 8601 time ({NO_ZONE}) after which the "
                                                 "memories made from it are not read, and are deleted."),
        data_dir: Optional[Path] = DataDir, create: bool = Create, as_json: bool = AsJson) -> None:
    """Add text, or a JSON list of chat messages (argument or stdin), to memory."""
    from mirix_py.cli.args import local_when, messages_or_text

    if text in (None, "-"):
        text = sys.stdin.read()
    content = _arg(messages_or_text, text, messages=messages)
    read_in = _typed_zone()
    occurred_at = _arg(local_when, occurred_at, "--occurred-at", read_in)
    expires = _arg(local_when, expires_at, "--expires-at", read_in)
    try:
        with _engine(data_dir, create=create, forward=True) as mx:
            result = mx.add(content, user_id=user, occurred_at=occurred_at, source_id=source_id, expires_at=expires)
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
        return
    console.print(f"[green]{result.status.value}[/] ({result.mode} mode): {len(result.changes)} change(s)")
    for change in result.changes:
        console.print(f"  {change.operation.value:7} {change.memory_type.value:16} {change.memory_id}")
    if result.error:
        err.print(f"[red]{_shown(result.error)}[/]")


@app.command()
def search(query: str, user: str = User, limit: int = typer.Option(10, "--limit", "-n"),
           memory_type: Optional[list[str]] = typer.Option(None, "--type", "-t", help="Repeat to allow several."),
           method: str = typer.Option("hybrid", help="hybrid | bm25 | embedding | string"),
           start: Optional[str] = typer.Option(None, help=f"occurred_at >= this (ISO 8601; {NO_ZONE})"),
           end: Optional[str] = typer.Option(None, help=f"occurred_at < this (ISO 8601; {NO_ZONE})"),
           context: Optional[int] = typer.Option(
               None, "--context", min=0, help="Turns said around the first N matches, listed after them "
               "(default: MIRIX_SEARCH_CONTEXT, else 0: the matches only)."),
           data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Search a user's memories; with a search context (--context N, or MIRIX_SEARCH_CONTEXT) the turns said
    just before and after the first N matches are listed after them."""
    from mirix_py.cli.args import local_when, memory_types

    types = _arg(memory_types, memory_type)
    read_in = _typed_zone()
    start, end = _arg(local_when, start, "--start", read_in), _arg(local_when, end, "--end", read_in)
    try:
        with _engine(data_dir, write=False) as mx:
            hits = mx.search(query, user_id=user, limit=limit, memory_types=types, start=start,
                             end=end, method=method, context=context)
            zone = _zone(mx)
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json(hits)
        return
    matches = sum(1 for h in hits if h.context_for is None)
    title = f"{matches} hit(s) for {query!r}" + (f", {len(hits) - matches} turn(s) of context" if len(hits) > matches
                                                  else "")
    console.print(_memory_table([h.memory for h in hits], title,
                                [None if h.context_for else h.score for h in hits], zone))


@app.command()
def chat(message: str, user: str = User,
         remember: bool = typer.Option(True, "--remember/--no-remember",
                                       help="Feed the exchange back into memory (questions never outrank facts)."),
         data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Ask a question answered from memory (offline: the best memories, cited)."""
    try:
        with _engine(data_dir, write=remember, forward=True) as mx:
            response = mx.chat(message, user_id=user, remember=remember)
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json(response)
        return
    console.print(_shown(response.answer))
    console.print(f"[dim]mode: {response.mode}; topics: {', '.join(response.topics)}; cited: "
                  f"{', '.join(response.memory_ids) or 'none'}; {response.usage.llm_calls} LLM call(s)[/]")


@app.command("list")
def list_(user: str = User, memory_type: Optional[list[str]] = typer.Option(None, "--type", "-t"),
          limit: int = typer.Option(50, "--limit", "-n"),
          before: Optional[str] = typer.Option(None, "--before", help=(
              "The cursor an earlier page printed (on stderr): the memories after that page, none twice or "
              "missed while memories are written or deleted meanwhile (one whose time is edited meanwhile can "
              "move across the cursor: listed twice or not at all).")),
          offset: int = typer.Option(0, help="How many of the newest to skip (not with --before); shifts when "
                                             "memories are written or deleted between pages."),
          data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """List a user's memories, newest first; when more follow, the next page's --before is printed on stderr."""
    from mirix_py.cli.args import memory_types
    from mirix_py.store.memories import MemoryPosition

    types = _arg(memory_types, memory_type)
    try:
        with _engine(data_dir, write=False) as mx:
            # one more than shown tells whether more follow (a limit below 1 is refused as before)
            memories = mx.list(user_id=user, memory_types=types, limit=limit + 1 if limit > 0 else limit,
                               offset=offset, before=before)
            zone = _zone(mx)
    except (MirixError, ValueError) as exc:
        _fail(exc)
    more, memories = len(memories) > limit, memories[:limit]
    if as_json:
        _print_json(memories)
    else:
        console.print(_memory_table(memories, f"{len(memories)} memories of {user}", zone=zone))
    if more:
        sys.stderr.write(f"More: --before {MemoryPosition.of(memories[-1]).cursor()}\n")  # unwrapped: copied whole


@app.command()
def show(memory_id: str = typer.Argument(..., help="A memory id or a unique prefix of one (4+ characters)."),
         user: str = User, history: bool = typer.Option(False, "--history", help="Show every change."),
         data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Show one memory (secrets stay masked) and, with --history, what each change did."""
    from mirix_py.cli.args import event_changes
    from mirix_py.store import prefixes
    from mirix_py.boundary.timezones import zone_name

    memory = None
    try:
        with _engine(data_dir, write=False) as mx:
            memory_id = prefixes.memory_id(mx.engine, user, memory_id)
            events = mx.history(memory_id, user_id=user) if history else []
            zone = _zone(mx)
            try:
                memory = mx.get(memory_id, user_id=user)
            except MirixError:
                if not history:  # a deleted memory still has its history
                    raise
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json({"memory": memory, "history": events} if history else memory)
        return
    if memory is not None:
        console.print(JSONHighlighter()(_json_text(memory)), soft_wrap=True)  # print_json unescapes C1
    else:
        console.print(f"[yellow]{memory_id} is deleted; its history:[/]")
    if history:
        table = Table(title="history", caption=f"times in {zone_name(zone)}")
        for col in ("when", "operation", "actor", "input", "changes"):
            table.add_column(col, overflow="fold")
        for e in events:
            table.add_row(e.created_at.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %Z"), e.operation.value,
                          _shown(e.actor), e.input_id or "", _shown("\n".join(event_changes(e))))
        console.print(table)


@app.command()
def delete(memory_id: str = typer.Argument(..., help="A memory id or a unique prefix of one."), user: str = User,
           data_dir: Optional[Path] = DataDir, as_json: bool = AsJson,
           erase: bool = typer.Option(False, "--erase", help="Also take their words out of the store: history "
                                      "states, and the text of an input no turn or frame cites any more.")) -> None:
    """Delete one memory (a history event: `mirix show ID --history` still shows it; `undo` of a delete
    made by an input restores it). A turn's deletion also takes back what was said only in it (core
    lines, facts, procedures, resources, vault entries); they are listed. `--erase` leaves no word of
    them in the store (`Mirix.delete(..., erase=True)`)."""
    from mirix_py.store import prefixes

    try:
        with _engine(data_dir, forward=True) as mx:
            memory_id = prefixes.memory_id(mx.engine, user, memory_id)
            changes = mx.delete(memory_id, user_id=user, actor="cli", erase=erase)
    except MirixError as exc:
        _fail(exc)
    taken_back = [f"{c.operation.value} {c.memory_id}" for c in changes if c.memory_id != memory_id]
    if as_json:
        _print_json({"deleted": memory_id, "taken_back": taken_back, **({"erased": True} if erase else {})})
        return
    console.print(f"{'erased' if erase else 'deleted'} {memory_id}"
                  + (f" (and took back what it alone said: {', '.join(taken_back)})" if taken_back else ""),
                  soft_wrap=True)


@app.command()
def update(memory_id: str = typer.Argument(..., help="A memory id or a unique prefix of one."),
           assignments: Optional[list[str]] = typer.Argument(None, help="name=value, e.g. summary='Tom flies'; "
                                                             "JSON values (lists, numbers) are read as JSON."),
           user: str = User, fields_json: Optional[str] = typer.Option(None, "--fields-json",
                                                                       help="The fields as one JSON object."),
           data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Change fields of one memory in place (its id stays; the change is a history event)."""
    from mirix_py.cli.args import field_assignments
    from mirix_py.store import prefixes

    fields = _arg(field_assignments, assignments or [], fields_json)
    try:
        with _engine(data_dir, forward=True) as mx:
            memory_id = prefixes.memory_id(mx.engine, user, memory_id)
            memory = mx.update(memory_id, fields, user_id=user, actor="cli")
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json(memory)
        return
    console.print(f"updated {memory_id}: {', '.join(sorted(fields))}")


@app.command()
def assistant(user: str = User, port: int = typer.Option(8000, help="Port (loopback only)."),
              interval: float = typer.Option(1.5, "--interval", min=0.1, help="Seconds between screen grabs."),
              all_screens: bool = typer.Option(False, "--all-screens", help="Every monitor, not just the main one."),
              no_auth: bool = typer.Option(False, "--no-auth", help="Serve without API keys (this machine only)."),
              data_dir: Optional[Path] = DataDir, create: bool = Create) -> None:
    """Capture the screen into memory and serve the viewer, REST and MCP from one process (Ctrl-C stops)."""
    import os
    import signal
    import threading

    from mirix_py.cli.assistant import Assistant
    from mirix_py.store import discovery
    from mirix_py.ingest.capture import CaptureUnavailable, ImageGrabSource

    source = ImageGrabSource(all_screens=all_screens)
    try:
        source.check()
    except CaptureUnavailable as exc:
        _fail(exc)
    from mirix_py.server import create_app
    from mirix_py.server.keys import KeyStore

    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        with _engine(data_dir, create=create) as mx:
            keys = KeyStore(mx.engine)
            if not no_auth and not keys.list():
                err.print("[yellow]no API keys yet: create one with[/] mirix keys create --user USER "
                          "[yellow](or run with --no-auth on this machine)[/]")
            app_ = create_app(mx, keys=keys, auth=not no_auth, mcp=True, mcp_host="127.0.0.1", mcp_port=port)
            with Assistant(mx, source, user, app_, port=port, interval=interval) as running, \
                    discovery.announced(mx.settings.data_dir, discovery.ServerInfo(
                        url=running.url, pid=os.getpid(), started_at=discovery.now(), key=keys.session_key(),
                        process="mirix assistant")):  # `mirix mcp` on this data dir talks to this process
                err.print(f"capturing every {interval:g} s for {user}; serving {running.url} (viewer: /viewer, "
                          f"API docs: /docs, MCP: /mcp); Ctrl-C stops")
                while not stop.is_set() and not running.wait(0.5):
                    pass
            stats = running.stats
            if stats is not None:
                console.print(f"captured {stats.grabbed} frame(s), {stats.duplicates} duplicate(s), "
                              f"{len(stats.errors)} error(s) in {stats.seconds:.0f} s")
    except (CaptureUnavailable, MirixError) as exc:
        _fail(exc)
    finally:
        signal.signal(signal.SIGINT, previous)


@app.command()
def undo(input_id: str = typer.Argument(..., help="The input whose changes to take back (from `add`)."),
         user: str = User, force: bool = typer.Option(False, "--force", help="Also overwrite later changes."),
         data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Revert every change one input caused: inserts deleted, updates and deletions restored."""
    from mirix_py.store import prefixes

    try:
        with _engine(data_dir, forward=True) as mx:
            input_id = prefixes.input_id(mx.engine, user, input_id)
            changes = mx.undo(input_id, user_id=user, force=force)
    except MirixError as exc:
        _fail(exc)
    if as_json:
        _print_json(changes)
        return
    console.print(f"undid input {input_id}: {len(changes)} change(s)")
    for change in changes:
        console.print(f"  {change.operation.value:7} {change.memory_type.value:16} {change.memory_id}")


@app.command("export")
def export_(path: Path, user: Optional[str] = typer.Option(None, "--user", "-u", help="Only this user."),
            data_dir: Optional[Path] = DataDir) -> None:
    """Write memories to a JSON lines file (vault secrets stay encrypted)."""
    try:
        with _engine(data_dir, write=False) as mx:
            n = mx.export(path, user_id=user)
    except (MirixError, OSError) as exc:  # OSError: a folder that does not exist, a file not writable
        _fail(exc)
    console.print(f"exported {n} memories to {path}")


@app.command("import")
def import_(path: Path, data_dir: Optional[Path] = DataDir, create: bool = Create) -> None:
    """Read a JSON lines file written by `mirix export` (validated whole before writing)."""
    from tqdm import tqdm

    if not path.is_file():
        _fail(FileNotFoundError(f"{path} does not exist" if not path.exists() else f"{path} is not a file"))
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        with _engine(data_dir, create=create) as mx:
            counts = mx.import_(tqdm(lines, desc="import", unit="memory", disable=len(lines) < 200))
    except MirixError as exc:
        if "vault key" in str(exc):
            err.print("[yellow]hint: vault secrets are exported encrypted under the source store's vault key "
                      "(SOURCE_DIR/vault.key, or its MIRIX_VAULT_KEY). Import into a store with the same key: for "
                      "a new one, `mkdir NEW_DIR && cp SOURCE_DIR/vault.key NEW_DIR/` before `mirix import -d "
                      "NEW_DIR`.[/]", soft_wrap=True)
        _fail(exc)
    console.print(f"imported {counts['imported']} memories, skipped {counts['skipped_existing']} already present")


@app.command()
def stats(user: Optional[str] = typer.Option(None, "--user", "-u"), data_dir: Optional[Path] = DataDir,
          as_json: bool = AsJson) -> None:
    """Mode, backends and memory counts."""
    with _engine(data_dir, write=False) as mx:
        info = mx.stats(user_id=user)
    if as_json:
        _print_json(info)
        return
    for key, value in info.items():
        console.print(f"[bold]{key}[/]: {value}")


@app.command()
def doctor(repair: bool = typer.Option(False, "--repair", help="Fix what can be fixed (re-embeds with a progress bar)."),
           secrets: bool = typer.Option(False, "--secrets", help="Look for plaintext secrets instead (rows, history, "
                                        "full text, vector documents, input log, database files); with --repair "
                                        "move them into the vault."),
           data_dir: Optional[Path] = DataDir, as_json: bool = AsJson) -> None:
    """Check that SQL and the vector index agree, embeddings are current and the vault key works."""
    from tqdm import tqdm

    def progress(items, total):
        return tqdm(items, total=total, desc="re-embedding", unit="batch", disable=total < 2)

    with _engine(data_dir, write=repair) as mx:
        report = mx.doctor_secrets(repair=repair) if secrets else mx.doctor(repair=repair, progress=progress)
    summary = report.summary()
    if as_json:
        _print_json(summary)
    else:
        for key, value in summary.items():
            console.print(f"[bold]{key}[/]: {value}")
    raise typer.Exit(0 if report.clean else 1)


@app.command()
def worker(once: bool = typer.Option(False, "--once", help="Drain what is there, then exit."),
           poll: float = typer.Option(1.0, help="Seconds between looks at the input log."),
           data_dir: Optional[Path] = DataDir) -> None:
    """Process the input log: pending inputs and those of workers that died. Run several of these
    (processes or machines on one PostgreSQL) to scale ingestion out; no input is done twice. On an
    embedded store (SQLite, embedded Chroma) one process writes: a worker beside it is refused."""
    import time as _time

    from mirix_py.engine import Mirix
    from mirix_py.store.writer_lock import StoreBusy

    try:
        mx = Mirix(data_dir, resume=False)
    except StoreBusy as exc:
        _fail(exc)
    from sqlalchemy.exc import OperationalError

    with mx:
        total = 0
        while True:
            try:
                done = mx.work()
            except OperationalError as exc:  # the database is away: look again after the poll
                err.print(f"the database did not answer ({type(exc.orig).__name__ if exc.orig else exc}); "
                          f"trying again in {poll:g} s", soft_wrap=True)
                done = 0
                if once:
                    raise typer.Exit(1) from exc
            total += done
            if done:
                console.print(f"processed {done} input(s) ({total} so far)")
            if once:
                break
            _time.sleep(poll)
    console.print(f"worker {mx.worker_id} processed {total} input(s)")


@app.command("backup")
def backup_(path: Path, data_dir: Optional[Path] = DataDir) -> None:
    """Write a consistent backup (safe while the engine runs). The vault key is NOT in it."""
    try:
        with _engine(data_dir, write=False) as mx:
            manifest = mx.backup(path)
    except (MirixError, OSError) as exc:  # OSError: a folder not writable, a full disk
        _fail(exc)
    console.print(f"backup written to {path}: {manifest['counts']} (schema {manifest['schema']})")
    console.print("[yellow]keep the vault key (MIRIX_VAULT_KEY or the data dir's vault.key) safe: "
                  "restore needs it and it is not in the backup[/]")


@app.command()
def restore(path: Path, data_dir: Path = typer.Option(..., "--data-dir", "-d", help="An empty data directory."),
            vault_key_file: Optional[Path] = typer.Option(None, help="File holding the vault key of the backup."),
            database_url: Optional[str] = typer.Option(None, help="Restore into this (empty) database instead.")) -> None:
    """Restore a backup into an empty data directory; indexes are rebuilt with a progress bar."""
    import os as _os

    from tqdm import tqdm

    from mirix_py.engine import Mirix

    if data_dir.exists() and not data_dir.is_dir():
        _fail(NotADirectoryError(f"data directory {data_dir} is a file, not a directory"))
    try:
        key = vault_key_file.read_text().strip() if vault_key_file else _os.environ.get("MIRIX_VAULT_KEY", "")
        mx = Mirix.restore(path, data_dir, vault_key=key, database_url=database_url,
                           progress=lambda items, total: tqdm(items, total=total, desc="re-embedding", unit="batch"))
    except (MirixError, OSError) as exc:  # OSError: a key file that is not there, a folder not writable
        _fail(exc)
    with mx:
        console.print(f"restored into {data_dir}: {mx.stats()['memories']}")


@schemas_app.command("export")
def schemas_export(out: Path = typer.Option(None, "--out", help="Folder (default: the checkout's schemas/).")) -> None:
    """Write the JSON Schema of every public record."""
    from mirix_py.cli.schemas import default_schema_dir, write_schemas

    written = write_schemas(out or default_schema_dir())
    console.print(f"wrote {len(written)} schema files to {out or default_schema_dir()}")


@app.command()
def demo(data_dir: Optional[Path] = typer.Option(None, "--data-dir", "-d",
                                                  help="Where to keep the demo's memories (default: a temp dir)."),
         keep: bool = typer.Option(False, help="Keep the temp data dir.")) -> None:
    """Run the main job offline: ingest a short conversation and a document, then search and show history."""
    from mirix_py.cli.demo import run_demo

    run_demo(console, data_dir=data_dir, keep=keep)


def main() -> None:  # pragma: no cover
    app()
