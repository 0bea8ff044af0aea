"""`Memory`: the one front door. It composes the layers and holds no logic of its own."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, overload

from .conversation_api import ConversationAPI
from .embedders.base import Embedder
from .embedders.openai_compat import OpenAICompatibleEmbedder
from .errors import InvalidInput
from .filters import build_filter
from .layers.learning import LearnResult
from .layers.lifecycle import LifecyclePolicy
from .layers.semantic import Clock, NewMemory, SemanticMemory, Strategy
from .learning_api import LearningAPI, MessageLike
from .lifecycle_api import LifecycleAPI
from .llm.base import LLMClient
from .models import HistoryEvent, MemoryKind, MemoryRecord, ScopeLike, SearchHit, as_scope, utcnow
from .redacting import RedactingEmbedder, RedactingLLM
from .settings import Settings
from .storage import Store, open_store


class Memory(ConversationAPI, LifecycleAPI, LearningAPI):
    """Layered memory for agents.

    >>> memory = Memory(store="sqlite:///memories.db")       # doctest: +SKIP
    >>> memory.add("Alice prefers short answers", scope="alice", kind="preference")  # doctest: +SKIP
    >>> memory.search("how should I answer?", scope="alice")  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        store: Store | str | Path | None = None,
        embedder: Embedder | str | None = None,
        clock: Clock = utcnow,
        track_access: bool = True,
        settings: Settings | None = None,
        buffer: Any = None,
        llm: Any = None,
        extractor: Any = None,
    ) -> None:
        """Collaborators may be objects or spec strings; unset ones come from `settings` (MEMSTRATA_* env).

        `buffer` (a Buffer or `memory://` / `redis://...`), `llm` (an LLMClient or `openai:MODEL`...) and
        `extractor` are resolved lazily by the layers that use them.
        """
        self.settings = settings or Settings()
        self.buffer_spec = buffer if buffer is not None else self.settings.buffer
        self.llm_spec = llm if llm is not None else self.settings.llm
        self.extractor_spec = extractor
        self.store: Store = (
            store if store is not None and not isinstance(store, str | Path)
            else open_store(store or self.settings.store, owner_url=self.settings.store_owner)
        )  # fmt: skip
        self.embedder: Embedder = _resolve_embedder(embedder or self.settings.embedder)
        if self.settings.redact_pii and isinstance(self.embedder, OpenAICompatibleEmbedder):
            self.embedder = RedactingEmbedder(self.embedder)  # local embedders see the text anyway
        self.store.bind_embedder(self.embedder.name, self.embedder.dimensions)
        self.clock = clock
        self.semantic = SemanticMemory(
            store=self.store, embedder=self.embedder, clock=clock, track_access=track_access,
            default_expiry=LifecyclePolicy.from_settings(self.settings).default_expiry,
        )  # fmt: skip

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Memory:
        return cls(settings=settings or Settings())

    @cached_property
    def llm(self) -> LLMClient | None:
        """The optional LLM (from `llm=` or MEMSTRATA_LLM), resolved on first use; None = fully offline."""
        if self.llm_spec is None or not isinstance(self.llm_spec, str):
            llm = self.llm_spec
        else:
            from .llm.registry import resolve_llm

            llm = resolve_llm(self.llm_spec)
        if llm is not None and self.settings.redact_pii:
            llm = RedactingLLM(llm)
        return llm

    def close(self) -> None:
        if "work_queue" in self.__dict__:
            self.work_queue.stop()
        self.close_conversation()
        if "llm" in self.__dict__ and self.llm is not None:
            self.llm.close()
        self.semantic.access.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- semantic memory ---------------------------------------------------
    @overload
    def add(
        self,
        content: str,
        *,
        scope: ScopeLike,
        infer: Literal[False] = False,
        kind: MemoryKind | str = ...,
        metadata: Mapping[str, Any] | None = ...,
        importance: float = ...,
        source_ids: Sequence[str] = ...,
        expires_at: datetime | None = ...,
        pinned: bool = ...,
        created_at: datetime | None = ...,
    ) -> MemoryRecord: ...

    @overload
    def add(
        self,
        content: str | Sequence[MessageLike],
        *,
        scope: ScopeLike,
        infer: Literal[True],
        kind: MemoryKind | str = ...,
        metadata: Mapping[str, Any] | None = ...,
        importance: float = ...,
        source_ids: Sequence[str] = ...,
        expires_at: datetime | None = ...,
        pinned: bool = ...,
        created_at: datetime | None = ...,
    ) -> LearnResult: ...

    def add(
        self,
        content: str | Sequence[MessageLike],
        *,
        scope: ScopeLike,
        infer: bool = False,
        kind: MemoryKind | str = MemoryKind.FACT,
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        source_ids: Sequence[str] = (),
        expires_at: datetime | None = None,
        pinned: bool = False,
        created_at: datetime | None = None,
    ) -> MemoryRecord | LearnResult:
        """Store one memory verbatim (embedding + full text) and return it (or the identical existing one).

        With `infer=True`, `content` is one or more messages to learn from instead (see `learn`):
        extraction, resolution against current memories, entity and profile updates.
        """
        if infer:
            return self.learn(content, scope=scope, source_ids=source_ids)
        if not isinstance(content, str):
            raise InvalidInput("add() stores text verbatim; pass infer=True to learn from a list of messages")
        item = NewMemory(
            content=content, kind=MemoryKind.parse(kind), metadata=metadata, importance=importance,
            source_ids=tuple(source_ids), expires_at=expires_at, pinned=pinned, created_at=created_at,
        )  # fmt: skip
        return self.semantic.add_many(as_scope(scope), [item])[0]

    remember = add

    def add_many(self, items: Sequence[NewMemory], *, scope: ScopeLike, dedupe: bool = True) -> list[MemoryRecord]:
        """Store many memories with one embedding batch and one transaction."""
        return self.semantic.add_many(as_scope(scope), items, dedupe=dedupe)

    def get(self, memory_id: str, *, scope: ScopeLike) -> MemoryRecord:
        return self.semantic.get(as_scope(scope), memory_id)

    def list(
        self,
        *,
        scope: ScopeLike,
        kinds: Sequence[MemoryKind | str] | MemoryKind | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        as_of: datetime | str | None = None,
        include_superseded: bool = False,
        include_expired: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[MemoryRecord]:
        s = as_scope(scope)
        where = build_filter(
            kinds=kinds, metadata=metadata, agent_id=s.agent_id, session_id=s.session_id,
            created_after=created_after, created_before=created_before, as_of=as_of or self.clock(),
            include_superseded=include_superseded, include_expired=include_expired,
        )  # fmt: skip
        self.semantic.access.flush()
        return self.store.list_memories(s.user_id, where, limit=limit, offset=offset)

    def update(
        self,
        memory_id: str,
        *,
        scope: ScopeLike,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        expires_at: datetime | None = None,
        pinned: bool | None = None,
    ) -> MemoryRecord:
        return self.semantic.update(
            as_scope(scope), memory_id, content=content, metadata=metadata, importance=importance,
            expires_at=expires_at, pinned=pinned,
        )  # fmt: skip

    def supersede(self, memory_id: str, content: str, *, scope: ScopeLike, reason: str = "") -> MemoryRecord:
        """Replace an outdated memory with a new one; the old one stays in history and for `as_of`."""
        return self.semantic.supersede(as_scope(scope), memory_id, content, reason=reason)

    def forget(self, memory_id: str, *, scope: ScopeLike) -> bool:
        return self.semantic.forget(as_scope(scope), memory_id)

    def history(self, memory_id: str, *, scope: ScopeLike) -> builtins.list[HistoryEvent]:
        return self.semantic.history(as_scope(scope), memory_id)

    def search(
        self,
        query: str,
        *,
        scope: ScopeLike,
        k: int = 10,
        strategy: Strategy | str = Strategy.HYBRID,
        threshold: float | None = None,
        kinds: Sequence[MemoryKind | str] | MemoryKind | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        as_of: datetime | str | None = None,
        include_superseded: bool = False,
        decay_rate: float = 0.01,
    ) -> builtins.list[SearchHit]:
        """Search the scope's current memories. Every hit carries its component scores."""
        where = build_filter(
            kinds=kinds, metadata=metadata, created_after=created_after, created_before=created_before,
            as_of=as_of, include_superseded=include_superseded,
        )  # fmt: skip
        return self.semantic.search(
            as_scope(scope), query, k=k, strategy=Strategy.parse(strategy), threshold=threshold, where=where,
            decay_rate=decay_rate,
        )  # fmt: skip


def _resolve_embedder(spec: Embedder | str) -> Embedder:
    if not isinstance(spec, str):
        return spec
    from .embedders.registry import resolve_embedder

    return resolve_embedder(spec)
