"""API keys (admin keys only): create, list, revoke."""

from typing import Annotated

from fastapi import APIRouter, Path as PathParam, Response

from mirix_py.server.deps import Admin, Keys
from mirix_py.server.errors import ApiError
from mirix_py.server.keys import ApiKeyInfo, CreatedKey
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import CreateKeyRequest, ErrorOut

router = APIRouter(prefix=f"{API_PREFIX}/keys", tags=["keys"])


@router.post("", response_model=CreatedKey, status_code=201)
def create_key(_: Admin, body: CreateKeyRequest, keys: Keys) -> CreatedKey:
    """Create a key bound to `users` ('*' for every user). The key is in this answer only."""
    return keys.create(body.users, name=body.name, admin=body.admin)


@router.get("", response_model=list[ApiKeyInfo])
def list_keys(_: Admin, keys: Keys, include_revoked: bool = False) -> list[ApiKeyInfo]:
    return keys.list(include_revoked=include_revoked)


@router.delete("/{key_id}", status_code=204, responses={404: {"model": ErrorOut}})
def revoke_key(_: Admin, key_id: Annotated[str, PathParam(max_length=40)], keys: Keys) -> Response:
    if not keys.revoke(key_id):
        raise ApiError(404, "not_found", f"no active key {key_id!r}")
    return Response(status_code=204)
