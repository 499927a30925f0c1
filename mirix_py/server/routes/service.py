"""Liveness, the calling key, and stats over all users."""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import APIRouter

from mirix_py.server.deps import Caller, Engine, RequestLimits
from mirix_py.server.errors import ApiError
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import Health, Me

router = APIRouter(tags=["service"])


def package_version() -> str:
    try:
        return version("mirix-py")
    except PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


def public_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """Stats without the server's file paths."""
    return {k: v for k, v in stats.items() if k != "data_dir"}


@router.get("/health", response_model=Health)
def health(mx: Engine, limits: RequestLimits) -> Health:
    """Liveness and readiness: the database answers. No key needed, so a client learns the input and
    body limits it must keep to before it sends anything."""
    try:
        database = mx.ping()
        behind = mx.replica_behind()
    except Exception as exc:  # the database is down: say so with 503
        raise ApiError(503, "unavailable", f"database unavailable: {type(exc).__name__}") from exc
    return Health(version=package_version(), mode="llm" if mx.mode == "llm" else "offline", database=database,
                  replica_behind_bytes=behind, max_input_chars=mx.settings.max_input_chars,
                  max_body_bytes=limits.max_body)


@router.get(f"{API_PREFIX}/me", response_model=Me)
def me(caller: Caller) -> Me:
    """The calling key: its id, the users it may act for, whether it is an admin key."""
    return Me(key_id=caller.key_id, users=sorted(caller.users), admin=caller.admin)


@router.get(f"{API_PREFIX}/stats")
def stats_all(caller: Caller, mx: Engine) -> dict[str, Any]:
    """Mode, backends and memory counts over all users (all-users keys only)."""
    if not caller.all_users:
        raise ApiError(403, "forbidden", "stats over all users need an all-users key; "
                                         "use /v1/users/{user_id}/stats")
    return public_stats(mx.stats())
