"""`MemoryAPI`: what every memstrata front end offers, in-process or over HTTP.

`Memory` (in-process) and `MemoryClient` (a server over REST) both satisfy it, and their async
flavours (`AsyncMemory`, `AsyncMemoryClient`, generated into `memstrata.aio`) satisfy
`AsyncMemoryAPI`. Code written against the Protocol runs on either, and mypy checks the four
classes against it (tests/unit/test_api_protocol.py), so a renamed or misspelt method is a type error.

`Memory` offers more than the Protocol (workers, scheduled upkeep, sweeps): those are operations of
the process that owns the store, not of a remote client.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from .buffer import Turn
from .export_format import ExportDocument
from .filters import SearchFilter
from .layers.context import DEFAULT_MAX_TOKENS, Context
from .layers.entities import Entity
from .layers.learning import LearnResult
from .layers.lifecycle import ConsolidationOptions, ConsolidationReport, ErasureReceipt, ImportReport
from .layers.procedures import Procedure
from .layers.profile import ProfileFact
from .layers.semantic import Strategy
from .layers.work_queue import QueueStatus
from .messages import MessageLike
from .models import HistoryEvent, MemoryKind, MemoryRecord, ScopeLike, SearchHit


class MemoryAPI(Protocol):
    """The operations of a memstrata memory; every one names the user it acts on with `scope=`."""

    # semantic memory
    def add(
        self,
        content: str,
        *,
        scope: ScopeLike,
        kind: MemoryKind | str = MemoryKind.FACT,
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        source_ids: Sequence[str] = (),
        expires_at: datetime | None = None,
        pinned: bool = False,
    ) -> MemoryRecord: ...

    def get(self, memory_id: str, *, scope: ScopeLike) -> MemoryRecord: ...

    def list(
        self, *, scope: ScopeLike, filters: SearchFilter | None = None, limit: int = 100, offset: int = 0
    ) -> builtins.list[MemoryRecord]: ...

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
    ) -> MemoryRecord: ...

    def supersede(self, memory_id: str, content: str, *, scope: ScopeLike, reason: str = "") -> MemoryRecord: ...

    def forget(self, memory_id: str, *, scope: ScopeLike) -> bool: ...

    def history(self, memory_id: str, *, scope: ScopeLike) -> builtins.list[HistoryEvent]: ...

    def search(
        self,
        query: str,
        *,
        scope: ScopeLike,
        k: int = 10,
        strategy: Strategy | str = Strategy.HYBRID,
        threshold: float | None = None,
        filters: SearchFilter | None = None,
        decay_rate: float = 0.01,
    ) -> builtins.list[SearchHit]: ...

    # profile, entities, procedures
    def set_fact(
        self, category: str, key: str, value: str, *, scope: ScopeLike, source: str | None = None
    ) -> ProfileFact: ...

    def facts(self, *, scope: ScopeLike, category: str | None = None) -> builtins.list[ProfileFact]: ...

    def delete_fact(self, category: str, key: str, *, scope: ScopeLike) -> bool: ...

    def upsert_entity(
        self,
        name: str,
        *,
        scope: ScopeLike,
        type: str = "other",
        summary: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        aliases: Sequence[str] = (),
        memory_id: str | None = None,
    ) -> Entity: ...

    def entities(self, *, scope: ScopeLike) -> builtins.list[Entity]: ...

    def entity(self, name: str, *, scope: ScopeLike) -> Entity: ...

    def add_procedure(
        self,
        task: str,
        *,
        scope: ScopeLike,
        instruction: str | None = None,
        example_input: str | None = None,
        example_output: str | None = None,
        agent_wide: bool = False,
    ) -> Procedure: ...

    def procedures(self, task: str, *, scope: ScopeLike, k: int = 3) -> builtins.list[Procedure]: ...

    # learning
    def learn(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        scope: ScopeLike,
        known_name: str | None = None,
        source_ids: Sequence[str] = (),
    ) -> LearnResult: ...

    def learn_later(self, messages: Sequence[MessageLike] | MessageLike, *, scope: ScopeLike) -> str: ...

    def queue_status(self) -> QueueStatus: ...

    # conversations
    def add_message(
        self,
        role: str,
        content: str,
        *,
        scope: ScopeLike,
        at: datetime | str | None = None,
        speaker: str | None = None,
    ) -> Turn: ...

    def add_messages(self, messages: Sequence[MessageLike], *, scope: ScopeLike) -> builtins.list[Turn]: ...

    def recent_turns(self, n: int | None = None, *, scope: ScopeLike) -> builtins.list[Turn]: ...

    def session_summary(self, *, scope: ScopeLike) -> str: ...

    def clear_session(self, *, scope: ScopeLike) -> None: ...

    def end_session(self, *, scope: ScopeLike) -> dict[str, Any]: ...

    def user_context(self, *, scope: ScopeLike) -> dict[str, Any]: ...

    def context(
        self,
        query: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        *,
        scope: ScopeLike,
        include: Sequence[str] | None = None,
    ) -> Context: ...

    # lifecycle and privacy
    def consolidate(self, *, scope: ScopeLike, options: ConsolidationOptions | None = None) -> ConsolidationReport: ...

    def erase_user(self, *, scope: ScopeLike) -> ErasureReceipt: ...

    def export_user(self, *, scope: ScopeLike) -> ExportDocument: ...

    def import_user(
        self, document: ExportDocument | dict[str, Any] | str | bytes, *, scope: ScopeLike | None = None
    ) -> ImportReport: ...

    def close(self) -> None: ...
