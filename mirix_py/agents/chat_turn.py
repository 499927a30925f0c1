"""One chat turn through the chat flow, with a stand-in for every step a model takes.

Keyword topics stand in when the topic call fails (the answer step may still work) and when the
search on the model's topics fails (the question's own search then runs, so the question is still
answered and remembered); the offline answer (the best memories with their ids) stands in when the
answer call fails or its answer is unusable, and `fallback` says why. Topics, retrieval and the
model read the question with secrets as placeholders; the exchange fed back into memory keeps it
whole (the input log is encrypted and the vault rules take the secret). An offline answer only
echoes memories, so only the question is fed back.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Sequence, get_args

from mirix_py.agents.chat import ChatFlow, Retrieval, Topics, offline_topics, unusable_answer
from mirix_py.agents.core_blocks import core_memory
from mirix_py.agents.flow import RunCoroutine
from mirix_py.errors import InvalidInput
from mirix_py.llm.meter import Meter
from mirix_py.records import ChatResponse, LLMUsage, Message
from mirix_py.secrets.redaction import scrub
from mirix_py.store.memories import MemoryStore
from mirix_py.text import storable
from mirix_py.store.questions import exchange_ids

log = logging.getLogger("mirix_py")

Remember = Callable[[list[dict[str, Any]]], list[str]]  # feeds the exchange back; returns its input ids


HISTORY_ROLES = frozenset(get_args(Message.model_fields["role"].annotation))  # a message's roles


def checked_history(message: str, history: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The history as a list, or InvalidInput for an empty message or a malformed history."""
    if not isinstance(message, str) or not message.strip():
        raise InvalidInput("message is empty")
    turns = list(history or [])
    if not all(isinstance(h, dict) and isinstance(h.get("content"), str) for h in turns):
        raise InvalidInput("history must be a list of {'role', 'content'} dicts")
    roles = sorted({str(h["role"]) for h in turns if h.get("role", "user") not in HISTORY_ROLES})
    if roles:
        raise InvalidInput(f"history role {roles[0]!r} is not one of {sorted(HISTORY_ROLES)}")
    found = storable.first_problem(message, "message") or storable.first_problem(turns, "history")
    if found:
        raise InvalidInput(found)
    return turns


def retrieved(flow: ChatFlow, user_id: str, message: str, topics: Topics,
              own_topics: Topics) -> tuple[Topics, Retrieval]:
    """The topics searched and what coarse retrieval found with them: a model's `topics` are what it
    wrote, so a search they fail falls back to the question's own (`own_topics`), which the caller
    checked; that one failing is the caller's to hear."""
    core = core_memory(flow.store, user_id)
    if topics is not own_topics:
        try:
            return topics, flow.retrieve(user_id, message, topics, core)
        except Exception as exc:
            log.warning("search on the model's topics failed: %s: %s", type(exc).__name__, exc)
    return own_topics, flow.retrieve(user_id, message, own_topics, core)


def chat_turn(flow: ChatFlow, message: str, *, user_id: str, history: Sequence[dict[str, Any]] | None,
              run: RunCoroutine, remember: Remember | None, ledger: MemoryStore | None = None) -> ChatResponse:
    """Topics, coarse retrieval over all six types, targeted search, the answer with its citations;
    `remember` (None: nothing is fed back) takes the exchange. `ledger`: where the model's usage is
    written, the primary's store when `flow` reads a replica (default: `flow.store`)."""
    turns = checked_history(message, history)
    online = flow.client is not None
    started = time.perf_counter()
    meter = Meter()
    fallback: str | None = None
    raw_message, message = message, scrub(message)
    turns = [{**h, "content": scrub(h["content"])} for h in turns]
    own_topics = offline_topics(message, flow.now(), turns)  # "yesterday" on the user's clock (MIRIX_TIMEZONE), else UTC's
    topics = own_topics
    if online:
        try:
            topics = run(flow.topics(message, turns, meter))
        except Exception as exc:  # keyword topics stand in; the answer step may still work
            log.warning("topic step failed: %s: %s", type(exc).__name__, exc)
    topics, retrieval = retrieved(flow, user_id, message, topics, own_topics)
    answer, cited = "", []
    if online:
        try:
            answer, cited = run(flow.answer(user_id, message, turns, retrieval, meter))
            answer = storable.printable(answer)  # a NUL or a lone surrogate from the model would fail the feed
            fallback = unusable_answer(answer)
        except Exception as exc:  # whatever the model returned or did, chat answers
            fallback = f"the model failed: {type(exc).__name__}: {str(exc)[:200]}"
    if not online or fallback:
        reason = f"No usable answer from the model ({fallback})" if fallback else "Offline mode (no LLM configured)"
        answer, cited = flow.offline_answer(retrieval, reason=reason)
    # the question and the answer carry ids that say which is which: a memory citing only chat
    # questions is weighed down in search, so asking twice never outranks the fact (store.questions)
    question_id, answer_id = exchange_ids()
    exchange = [{"role": "user", "content": raw_message, "id": question_id}]
    if online and not fallback:
        exchange.append({"role": "assistant", "content": answer, "id": answer_id})
    usage = LLMUsage(**meter.summary(), wall_seconds=round(time.perf_counter() - started, 4))
    if online:
        (ledger or flow.store).record_usage(user_id, "chat", usage.model_dump())
    fed = remember(exchange) if remember is not None else []
    return ChatResponse(answer=answer, topics=topics.keywords, start=topics.start, end=topics.end,
                        memory_ids=cited, retrieved_ids=retrieval.ids, mode="llm" if online else "offline",
                        usage=usage, update_input_ids=fed, fallback=fallback)
