"""Errors the public API raises. Each says what was wrong; none leaves a partial write."""


class MirixError(Exception):
    pass


class InvalidInput(MirixError, ValueError):
    """The caller's input was rejected before anything was written.

    The message often quotes the input (a date, a validation error's value): a secret the vault
    rules find in it is replaced by a placeholder, so no SDK, REST, MCP or CLI error carries one."""

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str):
            from mirix_py.secrets.redaction import scrub  # lazy: the rules load only when an error is raised

            args = (scrub(args[0]), *args[1:])
        super().__init__(*args)


class MemoryNotFound(MirixError, LookupError):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no memory with id {memory_id!r} for this user")
        self.memory_id = memory_id


class InputsGone(MirixError):
    """A batch's inputs were deleted (their user deleted) while it ran: it writes nothing."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(f"{len(missing)} input(s) of this batch were deleted while it ran (e.g. {missing[0]!r}): "
                         "nothing written")
        self.missing = missing


class DatabaseGone(MirixError):
    """The database file this engine opened was deleted or replaced while it ran: a write would go
    into a file no one can open again, so nothing is read or written (the REST API answers 503)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"the database {path} was deleted or replaced while this engine ran; restart it "
                         "on the data directory that holds the data (or restore a backup)")
        self.path = path


class CoreMemoryFull(InvalidInput):
    pass


class LaterChanges(InvalidInput):
    """Undo refused because a memory the input touched was changed later: told apart from the other
    refusals, as `force=True` would overwrite those changes (REST error `later_changes`)."""


class DependencyMissing(InvalidInput):
    """A program or package the call needs is not installed on this machine (e.g. Tesseract): the
    input may be fine, so the REST API answers 503 rather than 422."""


class ModelCallFailed(RuntimeError):
    """A model call that produced nothing usable: timed out, cut at its bound, or refused by the server."""
