"""`Memory` methods for consolidation, expiry, erasure and export/import (delegation only)."""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .layers.lifecycle import (
    ConsolidationReport,
    ErasureReceipt,
    ImportReport,
    Lifecycle,
    LifecyclePolicy,
    SweepReport,
)
from .models import ScopeLike, as_scope

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .core.compress import Window
    from .embedders.base import Embedder
    from .export_format import ExportDocument
    from .layers.semantic import Clock, SemanticMemory
    from .memory import Memory
    from .models import MemoryKind
    from .settings import Settings
    from .storage.base import Store


class LifecycleAPI:
    """Mixin of `Memory`: declares the attributes it relies on, which `Memory.__init__` sets."""

    store: Store
    embedder: Embedder
    semantic: SemanticMemory
    clock: Clock
    settings: Settings

    @cached_property
    def lifecycle(self) -> Lifecycle:
        return build_lifecycle(self)  # type: ignore[arg-type]  # a mixin of Memory

    # -- consolidation -----------------------------------------------------------------------------
    def consolidate(
        self,
        *,
        scope: ScopeLike,
        older_than: timedelta | float | None = None,
        min_count: int | None = None,
        kinds: Sequence[MemoryKind | str] | None = None,
        window: Window | str | None = None,
        use_llm: bool | None = None,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Compress the user's memories older than `older_than` (a timedelta or days; default from
        settings, 30) into "[Compressed memory] …" summaries, when at least `min_count` (default 10)
        qualify. `dry_run=True` only reports the groups it would compress.

        Pinned memories, memories a profile fact points to, preferences, tasks and procedures are
        never compressed. Originals stay in history and for `as_of`; summaries keep their provenance.
        """
        return self.lifecycle.consolidate(
            as_scope(scope).user_id, older_than_days=older_than, min_count=min_count, kinds=kinds, window=window,
            use_llm=use_llm, dry_run=dry_run,
        )  # fmt: skip

    def after_turns(self, *, scope: ScopeLike, turns: int = 1) -> ConsolidationReport | None:
        """The every-N-turns consolidation policy (`consolidate_every_turns`, default 20)."""
        return self.lifecycle.after_turns(as_scope(scope).user_id, turns)

    def maintain(self, *, users: Sequence[str] | None = None) -> dict[str, Any]:
        """Scheduled upkeep of all (or the given) users: sweep, then consolidate where due."""
        return self.lifecycle.maintain(users)

    # -- expiry ------------------------------------------------------------------------------------
    def sweep(self, *, scope: ScopeLike | None = None) -> SweepReport:
        """Delete what expired (per memory `expires_at`, per-kind TTL, episode and session retention),
        for one user or every user."""
        return self.lifecycle.sweep(None if scope is None else as_scope(scope).user_id)

    # -- privacy -----------------------------------------------------------------------------------
    def erase_user(self, user_id: ScopeLike) -> ErasureReceipt:
        """GDPR Art. 17: remove everything about the user in every layer and backend, in one call,
        and return the stored, content-free receipt."""
        self.semantic.access.flush()
        return self.lifecycle.erase_user(as_scope(user_id).user_id)

    def erasure_receipt(self, request_id: str) -> ErasureReceipt | None:
        return self.lifecycle.receipt(request_id)

    def export_user(self, user_id: ScopeLike) -> ExportDocument:
        """GDPR Art. 15/20: everything stored about the user as one versioned JSON document."""
        self.semantic.access.flush()
        return self.lifecycle.export_user(as_scope(user_id).user_id)

    def import_user(
        self, document: ExportDocument | dict[str, Any] | str | bytes, *, user_id: str | None = None
    ) -> ImportReport:
        """Restore an export into this store (re-embedded with this store's embedder); idempotent."""
        return self.lifecycle.import_user(document, user_id=user_id)


def build_lifecycle(memory: Memory) -> Lifecycle:
    """A `Lifecycle` over a `Memory`'s collaborators; the LLM and the buffer are the ones the other
    layers use (resolved on first use, so erasure reaches the same Redis keys or in-process buffer)."""
    return Lifecycle(
        store=memory.store, embedder=memory.embedder, clock=memory.clock,
        policy=LifecyclePolicy.from_settings(memory.settings), llm=lambda: memory.llm,
        buffer=lambda: memory.conversation.buffer,
    )  # fmt: skip
