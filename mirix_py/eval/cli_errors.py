"""How `mirix eval`'s commands refuse a run: one `error:` line (scripts grep it), secrets scrubbed and
control characters made safe, as the main CLI says it; exit status 2."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from mirix_py.errors import MirixError
from mirix_py.secrets.redaction import scrub
from mirix_py.text.storable import terminal_safe

# What the engine and the harness refuse a run with (a store another vault key wrote, a database
# holding the users already, a cached store changed since).
# typer.Exit is a RuntimeError too: no `fail` may run inside a `try` that catches these.
REFUSALS = (MirixError, RuntimeError, ValueError, OSError)

_err = Console(stderr=True)


def fail(message: str) -> NoReturn:
    _err.print(f"[bold red]error:[/] {escape(terminal_safe(scrub(message)))}", soft_wrap=True)
    raise typer.Exit(2)
