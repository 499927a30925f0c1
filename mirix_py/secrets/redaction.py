"""Placeholders instead of secrets in every text that leaves through a side door.

Memories are guarded where they are written (`secrets.guard.SecretGuard`). This module covers the
texts that are not memories: error messages (REST, MCP, CLI, the input log's `error`), log lines,
rejected model writes, a chat question before any model or topic extraction reads it. It runs the
secret rules (`find_secrets`) and puts `[redacted:<entry type>]`, or `[vault:<id>]` when the value is
already in the vault (`known`: value -> vault id), where each secret was.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from mirix_py.secrets.detection import find_secrets
from mirix_py.secrets.guard import SecretGuard, known_pattern

_GUARD = SecretGuard(find_secrets)


def scrub(text: str, known: Mapping[str, str] | None = None) -> str:
    """`text` with every secret the rules find, and every `known` value, replaced by a placeholder."""
    if not isinstance(text, str) or not text:
        return text
    known = known or {}
    matches = _GUARD.matches(text)
    out: list[str] = []
    cursor = 0
    for m in sorted(matches, key=lambda m: m.start):
        if m.start < cursor:
            continue
        out.append(text[cursor:m.start])
        vault_id = known.get(m.value)
        out.append(f"[vault:{vault_id}]" if vault_id else f"[redacted:{m.entry_type}]")
        cursor = m.end
    out.append(text[cursor:])
    result = "".join(out)
    pattern = known_pattern(list(known)) if known else None
    if pattern is not None:
        result = pattern.sub(lambda m: f"[vault:{known[m.group()]}]", result)
    return result


def scrub_data(value: Any, known: Mapping[str, str] | None = None) -> Any:
    """`scrub` over every string of a JSON-like value (dicts, lists), keys left as they are."""
    if isinstance(value, str):
        return scrub(value, known)
    if isinstance(value, dict):
        return {k: scrub_data(v, known) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_data(v, known) for v in value]
    return value


# ---------------------------------------------------------------- logs

# Every logger the package uses (a test checks the source for others): a filter on a logger sees
# only that logger's own records, not its children's.
LOGGERS = ("mirix_py", "mirix_py.server", "mirix_py.ocr", "mirix_py.screenshots", "mirix_py.capture",
           "mirix_py.embeddings", "mirix_py.search", "mirix_py.store", "mirix_py.facade.background",
           "mirix_py.secrets", "mirix_py.langgraph", "httpx")  # httpx: the stdio MCP bridge's client logs its requests


class RedactingFilter(logging.Filter):
    """Rewrites a record's message and traceback with `scrub` before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error path
            return True
        record.msg, record.args = scrub(message), None
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def guard_logs() -> None:
    """Attach one `RedactingFilter` to each of the package's loggers (idempotent)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
