"""Core memory: the `persona` and `human` blocks of one user."""

from typing import Annotated

from fastapi import APIRouter, Path as PathParam

from mirix_py.records import CoreMemory
from mirix_py.server.deps import Actor, Engine, User
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import CoreAppendRequest, CoreRewriteRequest, ErrorOut

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}/core", tags=["core memory"])
CoreLabel = Annotated[str, PathParam(pattern="^(persona|human)$")]


@router.get("", response_model=dict[str, CoreMemory])
def core(user_id: User, mx: Engine) -> dict[str, CoreMemory]:
    """The `persona` and `human` blocks (a block never written comes back empty)."""
    return mx.core_memory(user_id=user_id)


@router.put("/{label}", response_model=CoreMemory, responses={409: {"model": ErrorOut}})
def core_rewrite(user_id: User, label: CoreLabel, body: CoreRewriteRequest, mx: Engine, actor: Actor) -> CoreMemory:
    return mx.core_rewrite(label, body.value, user_id=user_id, actor=actor)


@router.post("/{label}/append", response_model=CoreMemory,
             responses={409: {"model": ErrorOut, "description": "The block would be over its limit."}})
def core_append(user_id: User, label: CoreLabel, body: CoreAppendRequest, mx: Engine, actor: Actor) -> CoreMemory:
    return mx.core_append(label, body.text, user_id=user_id, actor=actor)
