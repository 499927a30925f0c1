"""Errors over REST: every failure is `{"error", "message", "detail"}` with a 4xx (or 503) status.

Exceptions are mapped by type: the engine's (`MemoryNotFound` 404, `CoreMemoryFull` 409,
`DependencyMissing` 503, any other `InvalidInput` 422), validation errors 422 (a JSON body nested
too deeply for the parser too, which FastAPI answers as a bare 400), and `ApiError`, which routes
raise with their own status.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Mapping, Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sqlalchemy.exc import OperationalError, StatementError
from starlette.exceptions import HTTPException as StarletteHTTPException

from mirix_py.errors import CoreMemoryFull, DatabaseGone, DependencyMissing, InvalidInput, MemoryNotFound
from mirix_py.secrets.redaction import scrub, scrub_data
from mirix_py.server.models import ErrorOut
from mirix_py.text.storable import MAX_NESTING

__all__ = ["ApiError", "error_response", "install_error_handlers"]

log = logging.getLogger("mirix_py.server")


class ApiError(Exception):
    """Raised by a route or dependency: answered with `status` and the error body."""

    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.headers = status, error, message, headers


def error_response(status: int, error: str, message: str, detail: Any = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """Every error body; a message or detail that quotes the request holds placeholders, not secrets."""
    message, detail = scrub(message), scrub_data(detail)
    return JSONResponse(ErrorOut(error=error, message=message, detail=detail).model_dump(mode="json"),
                        status_code=status, headers=headers)


def validation_message(errors: Sequence[Mapping[str, Any]]) -> str:
    """The first three problems as one line ("field: message; ...")."""
    parts: list[str] = []
    for err in errors[:3]:
        loc = [str(p) for p in err.get("loc", ()) if p != "body" and "[" not in str(p)]
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        part = f"{'.'.join(loc) or 'request'}: {message}"
        if part not in parts:
            parts.append(part)
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


def jsonable_errors(errors: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for err in errors[:20]:
        item = {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": err.get("type")}
        out.append(item)
    result: list[dict[str, Any]] = json.loads(json.dumps(out, default=str))
    return result


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.error, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        return error_response(422, "invalid_input", validation_message(errors), jsonable_errors(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, RecursionError):  # FastAPI's "error parsing the body": json.loads ran out of stack
            return error_response(422, "invalid_input", "the JSON body is nested too deeply to read (no field "
                                                        f"takes values nested more than {MAX_NESTING} levels deep)")
        codes = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 413: "too_large"}
        return error_response(exc.status_code, codes.get(exc.status_code, "error"), str(exc.detail),
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(MemoryNotFound)
    async def _not_found(_: Request, exc: MemoryNotFound) -> JSONResponse:
        return error_response(404, "not_found", str(exc))

    @app.exception_handler(CoreMemoryFull)
    async def _core_full(_: Request, exc: CoreMemoryFull) -> JSONResponse:
        return error_response(409, "core_memory_full", str(exc))

    @app.exception_handler(InvalidInput)
    async def _invalid(_: Request, exc: InvalidInput) -> JSONResponse:
        return error_response(422, "invalid_input", str(exc))

    @app.exception_handler(DatabaseGone)  # the data dir was removed under the server
    async def _database_gone(_: Request, exc: DatabaseGone) -> JSONResponse:
        log.error("%s", exc)
        return error_response(503, "unavailable", "database unavailable: its file was deleted or replaced")

    @app.exception_handler(DependencyMissing)  # e.g. no Tesseract on the server: not the caller's fault
    async def _unavailable(_: Request, exc: DependencyMissing) -> JSONResponse:
        return error_response(503, "unavailable", str(exc))

    @app.exception_handler(ValidationError)
    async def _model_invalid(_: Request, exc: ValidationError) -> JSONResponse:
        errors = list(exc.errors())
        return error_response(422, "invalid_input", validation_message(errors), jsonable_errors(errors))

    @app.exception_handler(StatementError)
    async def _statement(_: Request, exc: StatementError) -> JSONResponse:
        if isinstance(exc.orig, (OverflowError, UnicodeError)):  # a value the database cannot hold
            return error_response(422, "invalid_input", f"value cannot be stored: {exc.orig}")
        log.error("database error: %s", exc)
        return error_response(500, "internal", "database error")

    @app.exception_handler(OperationalError)  # a database that does not answer (the primary or the read replica)
    async def _database_down(_: Request, exc: OperationalError) -> JSONResponse:
        log.error("database unavailable: %s", type(exc.orig).__name__ if exc.orig is not None else exc)
        return error_response(503, "unavailable", "database unavailable: try again later")

    @app.exception_handler(OverflowError)
    async def _overflow(_: Request, exc: OverflowError) -> JSONResponse:  # e.g. a date at the edge of the calendar
        return error_response(422, "invalid_input", f"value out of range: {exc}")
