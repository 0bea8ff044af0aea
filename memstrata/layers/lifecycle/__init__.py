"""Lifecycle and privacy: consolidation, expiry sweeps, erasure, export and import.

`Lifecycle` is the one object the `Memory` facade (through `LifecycleAPI`), the CLI and the server
use; each job lives in its own module:

* `consolidation` — old memories → "[Compressed memory] …" summaries with provenance; turn and
  schedule policies;
* `retention` — `expires_at`, per-kind TTL and episode retention, session state retention;
* `erasure` — every trace of a user, and a content-free receipt;
* `portability` — export to / import from the versioned JSON document of `memstrata.export_format`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...embedders.base import Embedder
from ...export_format import ExportDocument
from ...llm.base import LLMClient
from ...models import RESERVED_PREFIX, validate_id
from ...storage.base import Store
from ._paging import all_users
from .consolidation import DEFAULT_OPTIONS, ConsolidationOptions, ConsolidationReport, Consolidator, as_options
from .erasure import Eraser, ErasureReceipt
from .policy import LIFECYCLE, LifecyclePolicy
from .portability import ImportReport, Porter, Progress
from .retention import Sweeper, SweepReport


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """What one `maintain` run did: the sweep of every user, and the consolidation of each user that
    was due (by store user id; empty when none was)."""

    sweep: SweepReport
    consolidated: dict[str, ConsolidationReport] = field(default_factory=dict)


class Lifecycle:
    """Consolidation, sweeps, erasure and export/import over one store and embedder.

    `llm` and `buffer` may be objects or zero-argument factories. Factories are called on first use,
    so an erasure never resolves an LLM and a consolidation never connects to Redis.
    """

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        clock: Callable[[], datetime],
        policy: LifecyclePolicy | None = None,
        llm: LLMClient | Callable[[], LLMClient | None] | None = None,
        buffer: Any = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.policy = policy or LifecyclePolicy()
        self._llm_source = llm
        self._buffer_source = buffer
        self.consolidator = Consolidator(store=store, embedder=embedder, clock=clock, policy=self.policy, llm=self._llm)
        self.sweeper = Sweeper(store=store, clock=clock, policy=self.policy)
        self.eraser = Eraser(store=store, clock=clock, buffer=self._buffer, secret=self.policy.receipt_secret)
        self.porter = Porter(store=store, embedder=embedder, clock=clock)

    def _llm(self) -> LLMClient | None:
        source = self._llm_source
        if source is not None and not isinstance(source, LLMClient):
            source = self._llm_source = source()
        return source

    def _buffer(self) -> Any:
        source = self._buffer_source
        if source is not None and not hasattr(source, "clear_user") and callable(source):
            source = self._buffer_source = source()
        return source

    # -- consolidation ---------------------------------------------------------------------------
    def consolidate(
        self, user_id: str, options: ConsolidationOptions = DEFAULT_OPTIONS, progress: Progress | None = None
    ) -> ConsolidationReport:
        """Compress the user's old memories into summaries, as `options` say (`ConsolidationOptions`:
        by default memories older than 30 days, when at least 10 qualify; the LLM summarizes when one
        is configured, else the offline extractive summary). `progress(done, total)` is told after
        each compressed group.
        """
        return self.consolidator.consolidate(validate_id(user_id, "user_id"), options, progress)

    def count_turns(self, user_id: str, turns: int = 1) -> bool:
        """Count a user's conversation turns; True every `consolidate_every_turns` (default 20), when
        the caller should queue `run_due_upkeep` (so the conversation path never consolidates inline:
        compressing may take a model call per group). The count is kept in this process and written to
        the store once every `consolidate_every_turns` turns (`turn_tally`)."""
        return self.consolidator.count_turns(validate_id(user_id, "user_id"), turns)

    def run_due_upkeep(self, user_id: str, *, job_id: str | None = None) -> ConsolidationReport:
        """The turn policy's periodic work for one user: consolidate, and reset the turn count.
        `job_id` names the queued job that runs it: a job that already ran does nothing."""
        return self.consolidator.run_and_record(validate_id(user_id, "user_id"), job_id=job_id)

    def maintain(self, user_ids: Sequence[str] | None = None) -> MaintenanceReport:
        """Scheduled upkeep: sweep every user (reserved scopes too), then consolidate the users whose
        last consolidation is older than `consolidate_interval_hours` (none when that is unset).
        Call it from a timer or cron."""
        users = [validate_id(u, "user_id") for u in user_ids] if user_ids is not None else all_users(self.store)
        sweep = self.sweeper.sweep(users)
        now = self.clock()
        consolidated = {
            user_id: self.consolidator.run_and_record(user_id)
            for user_id in users
            if not user_id.startswith(RESERVED_PREFIX) and self.consolidator.due(user_id, now)
        }
        return MaintenanceReport(sweep=sweep, consolidated=consolidated)

    # -- expiry and retention --------------------------------------------------------------------
    def sweep(self, user_id: str | None = None) -> SweepReport:
        """Delete what expired (`expires_at`, per-kind TTL, episode and session retention) for one user,
        or for every user when `user_id` is None. History keeps an EXPIRE event without text."""
        users = [validate_id(user_id, "user_id")] if user_id is not None else all_users(self.store)
        return self.sweeper.sweep(users)

    # -- erasure ---------------------------------------------------------------------------------
    def erase_user(self, user_id: str) -> ErasureReceipt:
        """Erase every trace of the user in every layer and backend; return the stored receipt.

        Erasing a user who has no data is not an error (the receipt counts zeros).
        """
        user_id = validate_id(user_id, "user_id")
        receipt = self.eraser.erase(user_id)
        self.consolidator.forget_turns(user_id)
        return receipt

    def receipt(self, request_id: str) -> ErasureReceipt | None:
        """A stored erasure receipt by its request id."""
        return self.eraser.receipt(request_id)

    # -- export / import -------------------------------------------------------------------------
    def export_user(self, user_id: str) -> ExportDocument:
        """Everything stored about the user as one versioned document (docs/export-format.md)."""
        return self.porter.export(validate_id(user_id, "user_id"))

    def import_user(
        self,
        document: ExportDocument | dict[str, Any] | str | bytes,
        *,
        user_id: str | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Restore an export (a document, dict or JSON text), re-embedding with this store's embedder.

        Idempotent; `user_id` imports under another id than the document's. `progress(done, total)` is
        told after each embedded batch of memories.
        """
        target = validate_id(user_id, "user_id") if user_id is not None else None
        return self.porter.import_(document, target, progress)


__all__ = [
    "MaintenanceReport",
    "LIFECYCLE",
    "ConsolidationOptions",
    "ConsolidationReport",
    "ErasureReceipt",
    "ImportReport",
    "Lifecycle",
    "LifecyclePolicy",
    "Progress",
    "SweepReport",
    "as_options",
]
