"""API keys (admin keys only): create, list, revoke; an admin key bound to some users manages only
keys bound to those users (`Principal.may_manage`)."""

from typing import Annotated

from fastapi import APIRouter, Path as PathParam, Response

from mirix_py.server.deps import Admin, Keys
from mirix_py.server.errors import ApiError
from mirix_py.server.keys import ApiKeyInfo, CreatedKey
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import CreateKeyRequest, ErrorOut

router = APIRouter(prefix=f"{API_PREFIX}/keys", tags=["keys"])


@router.post("", response_model=CreatedKey, status_code=201)
def create_key(admin: Admin, body: CreateKeyRequest, keys: Keys) -> CreatedKey:
    """Create a key bound to `users` ('*' for every user). The key is in this answer only."""
    if not admin.may_manage(u.strip() for u in body.users):
        raise ApiError(403, "forbidden", "this admin key may only create keys for its own users")
    return keys.create(body.users, name=body.name, admin=body.admin)


@router.get("", response_model=list[ApiKeyInfo])
def list_keys(admin: Admin, keys: Keys, include_revoked: bool = False) -> list[ApiKeyInfo]:
    """The keys this admin key manages: every key for an all-users admin key."""
    return [k for k in keys.list(include_revoked=include_revoked) if admin.may_manage(k.users)]


@router.delete("/{key_id}", status_code=204, responses={404: {"model": ErrorOut}})
def revoke_key(admin: Admin, key_id: Annotated[str, PathParam(max_length=40)], keys: Keys) -> Response:
    info = keys.get(key_id)
    # a key outside this admin's users is not found, as an unknown one: its existence is not told
    if info is None or info.revoked_at is not None or not admin.may_manage(info.users) or not keys.revoke(key_id):
        raise ApiError(404, "not_found", f"no active key {key_id!r}")
    return Response(status_code=204)
