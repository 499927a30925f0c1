"""Reading from memory: search, chat, and the context an agent puts in its prompt."""

from fastapi import APIRouter

from mirix_py.integrations.context import retrieve_context
from mirix_py.records import ChatResponse, MemoryContext, SearchHit
from mirix_py.server.deps import Engine, ReadAfter, User
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import ChatRequest, ContextRequest, SearchRequest

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}", tags=["memories"])


@router.post("/search", response_model=list[SearchHit])
def search(user_id: User, body: SearchRequest, mx: Engine, read_after: ReadAfter = None) -> list[SearchHit]:
    """Hybrid (BM25 + vectors, fused), `bm25`, `embedding` or `string` search, with type and time filters; the
    first matches come with the turns said around them (`context`, by default the server's `search_context`)."""
    return mx.search(body.query, user_id=user_id, limit=body.limit, memory_types=body.memory_types,
                     start=body.start, end=body.end, method=body.method, context=body.context,
                     read_after=read_after)


@router.post("/chat", response_model=ChatResponse)
def chat(user_id: User, body: ChatRequest, mx: Engine, read_after: ReadAfter = None) -> ChatResponse:
    """Answer from memory (offline: the best memories, cited)."""
    return mx.chat(body.message, user_id=user_id, history=[t.model_dump() for t in body.history],
                   remember=body.remember, read_after=read_after)


@router.post("/context", response_model=MemoryContext)
def context(user_id: User, body: ContextRequest, mx: Engine, read_after: ReadAfter = None) -> MemoryContext:
    """Topics, core memory and the best items of every type for a message: what an agent puts in its prompt."""
    return retrieve_context(mx, user_id, body.message, max_items=body.max_items, read_after=read_after)
