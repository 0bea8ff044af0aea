"""LangChain adapters: a chat message history and a retriever over memstrata.

* `MemstrataChatMessageHistory` — a `BaseChatMessageHistory` for one user session, backed by the
  session buffer and the episode log; a drop-in for `RedisChatMessageHistory(session_id, url, ttl)`.
* `MemstrataRetriever` — a `BaseRetriever` over `Memory.search` (strategy, k, threshold, time
  weighting), returning `Document`s with the memory id and scores in their metadata.

Both take a `Memory` (or an `AsyncMemory`); their async methods run the same code in a worker
thread, like `AsyncMemory`. Needs the `langchain` extra: `pip install 'memstrata-ai[langchain]'`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any, Literal

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
    from pydantic import field_validator, model_validator
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "memstrata.integrations.langchain needs LangChain: pip install 'memstrata-ai[langchain]'", name=exc.name
    ) from exc

import anyio.to_thread

from ..aio import AsyncMemory
from ..buffer import Turn
from ..embedders.base import Embedder
from ..errors import InvalidInput
from ..filters import SearchFilter
from ..layers.semantic import Strategy
from ..memory import Memory
from ..models import MemoryKind, Scope, SearchHit
from ..settings import Settings

HistoryMode = Literal["session", "window"]


# -- messages ------------------------------------------------------------------------------------
def message_text(message: BaseMessage) -> str:
    """The text of a message: string content, or the text blocks of a list content."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = [
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in content
        if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
    ]
    return "".join(parts)


def to_turn_dict(message: BaseMessage) -> dict[str, Any]:
    """A LangChain message as a memstrata message dict (role, content, speaker).

    The history keeps text turns: an AI message that only calls tools is stored as a line naming
    the calls, and a tool result as an assistant line marked as such.
    """
    text = message_text(message).strip()
    kind = message.type
    if kind in ("human", "user"):
        role = "user"
    elif kind == "system":
        role = "system"
    elif kind in ("tool", "function"):
        role, text = "assistant", f"[tool result{_name_suffix(message)}] {text}".strip()
    elif kind in ("ai", "assistant"):
        role = "assistant"
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            rendered = "; ".join(f"{c['name']}({json.dumps(c.get('args', {}), sort_keys=True)})" for c in calls)
            text = f"{text}\n[tool calls] {rendered}".strip()
    elif kind == "chat" and getattr(message, "role", None) in ("user", "assistant", "system"):
        role = str(message.role)  # type: ignore[attr-defined]
    else:
        raise InvalidInput(f"cannot store a LangChain message of type {kind!r} in the chat history")
    if not text:
        raise InvalidInput(f"cannot store an empty {kind} message in the chat history")
    name = getattr(message, "name", None)
    return {"role": role, "content": text, "speaker": name if role == "user" and name else None}


def _name_suffix(message: BaseMessage) -> str:
    name = getattr(message, "name", None)
    return f" {name}" if name else ""


def to_message(turn: Turn) -> BaseMessage:
    """A stored turn as a LangChain message; its id is the id of the turn's episode memory."""
    if turn.role == "user":
        return HumanMessage(content=turn.content, id=turn.id or None, name=turn.speaker)
    if turn.role == "system":
        return SystemMessage(content=turn.content, id=turn.id or None)
    return AIMessage(content=turn.content, id=turn.id or None)


def live_tail(turns: Sequence[Turn], now: datetime, ttl_seconds: float | None) -> list[Turn]:
    """The turns a TTL-expiring history still holds: those after the last idle gap of `ttl_seconds`
    (nothing when the last turn itself is that old). Redis' per-session key expiry, on timestamps."""
    if ttl_seconds is None or not turns:
        return list(turns)
    if (now - turns[-1].at).total_seconds() >= ttl_seconds:
        return []
    start = 0
    for i in range(1, len(turns)):
        if (turns[i].at - turns[i - 1].at).total_seconds() >= ttl_seconds:
            start = i
    return list(turns[start:])


# -- chat history --------------------------------------------------------------------------------
class MemstrataChatMessageHistory(BaseChatMessageHistory):
    """The chat history of one user session.

    Messages go to the episode log (durable, searchable, the source of long-term memories) and the
    session buffer (in-process, or Redis with `buffer="redis://..."`).

    `history="session"` (default) returns every message of the session, as `RedisChatMessageHistory`
    does; `history="window"` returns the session's rolling summary as a `SystemMessage` followed by
    its recent turns, so the prompt stays bounded however long the session runs.

    `ttl` (seconds) expires the session after that long without a new message, as Redis' key TTL:
    the history then starts empty, while the episodes stay in long-term memory. `clear()` deletes
    the session's messages (episodes, summary and buffered turns).
    """

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str,
        memory: Memory | AsyncMemory | None = None,
        store: str | None = None,
        buffer: str | None = None,
        embedder: Embedder | str | None = None,
        ttl: float | None = None,
        agent_id: str | None = None,
        history: HistoryMode = "session",
    ) -> None:
        """Pass a `memory`, or `store` / `buffer` URLs (and an `embedder`) for one that `close()` closes."""
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0):
            raise InvalidInput(f"ttl must be a positive number of seconds, got {ttl!r}")
        if history not in ("session", "window"):
            raise InvalidInput(f"history must be 'session' or 'window', got {history!r}")
        self.scope = Scope(user_id=user_id, agent_id=agent_id, session_id=session_id)
        self.ttl = float(ttl) if ttl is not None else None
        self.history = history
        self._owns_memory = memory is None
        self.memory = _open_memory(memory, store=store, buffer=buffer, embedder=embedder, ttl=self.ttl)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        now = self.memory.clock()
        if self.history == "session":
            turns = self.memory.session_messages(scope=self.scope)
            return [to_message(t) for t in live_tail(turns, now, self.ttl)]
        recent = self.memory.recent_turns(scope=self.scope)
        live = live_tail(recent, now, self.ttl)
        if recent and not live:
            return []
        summary = self.memory.session_summary(scope=self.scope)
        return ([SystemMessage(content=summary)] if summary else []) + [to_message(t) for t in live]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages in order (one embedding batch, one transaction)."""
        if messages:
            self.memory.add_messages([to_turn_dict(m) for m in messages], scope=self.scope)

    def clear(self) -> None:
        """Delete the session's messages: its episodes, rolling summary and buffered turns."""
        self.memory.clear_session(scope=self.scope)
        for turn in self.memory.session_messages(scope=self.scope):
            self.memory.forget(turn.id, scope=self.scope)

    async def aget_messages(self) -> list[BaseMessage]:
        return await anyio.to_thread.run_sync(lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await anyio.to_thread.run_sync(partial(self.add_messages, list(messages)))

    async def aclear(self) -> None:
        await anyio.to_thread.run_sync(self.clear)

    def close(self) -> None:
        """Close the Memory this history opened from URLs (a Memory passed in stays open)."""
        if self._owns_memory:
            self.memory.close()


def _open_memory(
    memory: Memory | AsyncMemory | None,
    *,
    store: str | None,
    buffer: str | None,
    embedder: Embedder | str | None,
    ttl: float | None,
) -> Memory:
    if memory is not None:
        if store is not None or buffer is not None or embedder is not None:
            raise InvalidInput("pass either memory= or store=/buffer=/embedder=, not both")
        return memory.sync if isinstance(memory, AsyncMemory) else memory
    settings = Settings() if ttl is None else Settings(buffer_ttl_seconds=max(1, round(ttl)))
    return Memory(store=store, buffer=buffer, embedder=embedder, settings=settings)


# -- retriever -----------------------------------------------------------------------------------
_OVERRIDES = frozenset({"k", "strategy", "threshold", "decay_rate", "kinds", "metadata_filter", "include_episodes"})
LONG_TERM_KINDS = [k.value for k in MemoryKind if k is not MemoryKind.EPISODE]
"""What the retriever returns by default: durable memories, not the conversation's own turns."""


class MemstrataRetriever(BaseRetriever):
    """Documents from `Memory.search` for one user (optionally narrowed to an agent or a session).

    `strategy`: "hybrid" (default), "semantic", "keyword", "hybrid_weighted" or "time_weighted"
    (recency of last access with `decay_rate`, as LangChain's TimeWeightedVectorStoreRetriever);
    `threshold`: minimum score; `kinds` / `metadata_filter`: filters. By default it returns long-term
    memories (facts, preferences, events, notes, tasks, summaries, procedures), not the episodes a chat
    history logs: a question asked earlier in the chat would otherwise outrank the fact that answers it.
    `include_episodes=True` (or `kinds` naming "episode") returns episodes too. Any of `k`, `strategy`,
    `threshold`, `decay_rate`, `kinds`, `metadata_filter`, `include_episodes` can also be given per call:
    `retriever.invoke("query", k=2)`.

    Each `Document` has `id` = the memory id, and metadata `memory_id`, `score`, `scores` (the
    components that produced the score), `kind`, `created_at`, `updated_at`, `importance`,
    `user_id`, `agent_id`, `session_id` and `metadata` (the memory's own metadata).
    """

    memory: Memory
    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    k: int = 4
    strategy: str = Strategy.HYBRID.value
    threshold: float | None = None
    decay_rate: float = 0.01
    kinds: list[str] | None = None
    metadata_filter: dict[str, Any] | None = None
    include_episodes: bool = False

    @field_validator("memory", mode="before")
    @classmethod
    def _sync_memory(cls, value: Any) -> Any:
        return value.sync if isinstance(value, AsyncMemory) else value

    @model_validator(mode="after")
    def _check(self) -> MemstrataRetriever:
        self.scope  # noqa: B018 - validates the ids
        Strategy.parse(self.strategy)
        for kind in self.kinds or ():
            MemoryKind.parse(kind)
        return self

    @property
    def scope(self) -> Scope:
        return Scope(user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id)

    def _search_kwargs(self, overrides: dict[str, Any]) -> dict[str, Any]:
        unknown = set(overrides) - _OVERRIDES
        if unknown:
            raise InvalidInput(f"unknown retriever option(s) {sorted(unknown)}; known: {sorted(_OVERRIDES)}")
        options = {name: getattr(self, name) for name in _OVERRIDES} | overrides
        metadata, kinds = options.pop("metadata_filter"), options.pop("kinds")
        if options.pop("include_episodes") is False and kinds is None:
            kinds = LONG_TERM_KINDS
        filters = SearchFilter(kinds=kinds or (), metadata=metadata or {})
        return {**options, "filters": filters, "scope": self.scope}

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        return [to_document(hit) for hit in self.memory.search(query, **self._search_kwargs(overrides))]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        hits = await AsyncMemory(self.memory).search(query, **self._search_kwargs(overrides))
        return [to_document(hit) for hit in hits]


def to_document(hit: SearchHit) -> Document:
    record = hit.memory
    return Document(
        page_content=record.content,
        id=record.id,
        metadata={
            "memory_id": record.id,
            "score": hit.score,
            "scores": dict(hit.scores),
            "kind": record.kind.value,
            "created_at": record.created_at.isoformat(),
            "updated_at": record.updated_at.isoformat(),
            "importance": record.importance,
            "user_id": record.scope.user_id,
            "agent_id": record.scope.agent_id,
            "session_id": record.scope.session_id,
            "metadata": dict(record.metadata),
        },
    )


__all__ = [
    "MemstrataChatMessageHistory",
    "MemstrataRetriever",
    "live_tail",
    "message_text",
    "to_document",
    "to_message",
    "to_turn_dict",
]
