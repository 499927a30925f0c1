"""Users: which ones a key may see, one user's stats, and deleting everything of a user."""

from typing import Any

from fastapi import APIRouter

from mirix_py.server.deps import Caller, Engine, User
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import DeletedUser, UsersOut
from mirix_py.server.routes.service import public_stats

router = APIRouter(prefix=f"{API_PREFIX}/users")


@router.get("", response_model=UsersOut, tags=["service"])
def users(caller: Caller, mx: Engine) -> UsersOut:
    """Users this key may act for; for an all-users key, every user that has data."""
    if not caller.all_users:
        return UsersOut(users=sorted(caller.users), all_users=False)
    return UsersOut(users=mx.user_ids(), all_users=True)


@router.get("/{user_id}/stats", tags=["service"])
def stats_user(user_id: User, mx: Engine) -> dict[str, Any]:
    """Memory counts and LLM usage of one user."""
    return public_stats(mx.stats(user_id=user_id))


@router.delete("/{user_id}", response_model=DeletedUser, tags=["users"])
def delete_user(user_id: User, mx: Engine) -> DeletedUser:
    """Remove every memory, vector, history event and input of the user."""
    return DeletedUser(user_id=user_id, deleted=mx.delete_user(user_id))
