"""Export (GDPR Art. 15/20) and import of one user, between any two stores.

`export_user` reads every memory (current, superseded, compressed, expired), every history event and
every item of every namespace into an `ExportDocument` (docs/export-format.md). Vectors are not
exported; `import_user` re-embeds with the target's embedder, so SQLite ↔ Postgres and a change of
embedding model both work. Import is idempotent: ids are kept, records and items already stored
identically are skipped, and history events already present (by id) are not added again — importing
the same document twice changes nothing. It never revives history and is written in one transaction
(all or nothing); the merge rules are `import_merge`'s.

An imported document carries only the importing user's data. Queued work (the queue namespace) is
never imported: a job is work to run, not data, and re-running a stranger's job would write what
its author chose. Items of namespaces memstrata does not keep per user are skipped too, and agent
ids must belong to the target's tenant (an agent of the document's own tenant is moved along to the
target's; any other is refused).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ... import namespaces
from ...distribution import installed_version
from ...embedders.base import Embedder
from ...errors import InvalidInput
from ...export_format import (
    ExportDocument,
    ExportedEvent,
    ExportedItem,
    ExportedMemory,
    ExportSource,
    parse_document,
)
from ...models import EventType, MemoryRecord, Scope, new_event, owner_prefix, validate_id
from ...storage.base import MemoryFilter, Store
from ._paging import PAGE, all_items, all_memories, user_namespaces
from .import_merge import Slot, deleted_memories, kept_retirement, new_events, one_current_per_slot, slot_of

EMBED_BATCH = 128
IMPORTABLE_NAMESPACES = frozenset(namespaces.ALL_USER_NAMESPACES) - {namespaces.QUEUE}


@dataclass(frozen=True, slots=True)
class ImportReport:
    user_id: str
    memories_written: int
    memories_unchanged: int
    events_written: int
    items_written: int
    items_unchanged: int
    embedder: str
    """The model that embedded the imported memories (the target store's)."""
    items_skipped: int = 0
    """Items not imported: queued jobs and namespaces memstrata does not keep per user."""


Progress = Callable[[int, int], None]
"""Told (done, total) as long work advances (e.g. to draw a progress bar)."""


class Porter:
    def __init__(self, *, store: Store, embedder: Embedder, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock

    def export(self, user_id: str) -> ExportDocument:
        items = [
            ExportedItem.of(item)
            for namespace in user_namespaces()
            for item in sorted(all_items(self.store, user_id, namespace), key=lambda i: i.key)
        ]
        source = ExportSource(
            store=self.store.url.split("://", 1)[0],
            embedder=self.embedder.name,
            dimensions=self.embedder.dimensions,
            memstrata_version=_version(),
        )
        return ExportDocument(
            user_id=user_id,
            exported_at=self.clock(),
            source=source,
            memories=[ExportedMemory.of(r) for r in all_memories(self.store, user_id)],
            history=[ExportedEvent.of(e) for e in self.store.all_history(user_id)],
            items=items,
        )

    def import_(
        self,
        document: ExportDocument | dict[str, Any] | str | bytes,
        user_id: str | None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Merge a document into the user (rules: `import_merge`), in one write: all of it or nothing.
        `progress(done, total)` is called after each embedded batch of memories."""
        doc = parse_document(document)
        target = validate_id(user_id or doc.user_id, "user_id")
        history = self.store.all_history(target)
        deleted = deleted_memories(history)
        events = new_events((e.to_event(target) for e in doc.history), {e.id: e for e in history}, deleted)
        records = [_with_agent(m.to_record(target), doc.user_id) for m in doc.memories if m.id not in deleted]
        existing = self._existing(target, records)
        records = [kept_retirement(r, existing.get(r.id)) for r in records]
        now = self.clock()
        retiring = self._one_current_per_slot(target, records, now)
        records = [retiring.get(r.id, r) for r in records]
        stored_retired = [r for r in retiring.values() if r.id not in {i.id for i in records}]
        changed = [r for r in records if existing.get(r.id) != r]
        vectors = self._embedded(changed, progress)
        # A memory that arrives without any history (a hand-written document) gets an IMPORT event.
        with_history = {e.memory_id for e in doc.history}
        events += [
            new_event(r, EventType.IMPORT, after=r.content, at=now, source=doc.source.store)
            for r in changed
            if r.id not in with_history and r.id not in existing
        ]
        events += [
            new_event(r, EventType.SUPERSEDE, before=r.content, at=now, successor=r.superseded_by, reason="import")
            for r in retiring.values()
        ]
        importable = [item for item in doc.items if item.namespace in IMPORTABLE_NAMESPACES]
        items = [
            (item.namespace, item.key, item.value)
            for item in importable
            if (current := self.store.get_item(target, item.namespace, item.key)) is None or current.value != item.value
        ]
        self.store.save(target, [*changed, *stored_retired], events, vectors, items=items)
        return ImportReport(
            target,
            len(changed),
            len(records) - len(changed),
            len(events),
            len(items),
            len(importable) - len(items),
            self.embedder.name,
            items_skipped=len(doc.items) - len(importable),
        )

    def _embedded(self, records: list[MemoryRecord], progress: Progress | None) -> npt.NDArray[np.float32] | None:
        """The vectors of `records`, embedded in batches (`progress` told after each)."""
        if not records:
            return None
        parts = []
        for start in range(0, len(records), EMBED_BATCH):
            batch = records[start : start + EMBED_BATCH]
            parts.append(np.asarray(self.embedder.embed_documents([r.content for r in batch]), dtype=np.float32))
            if progress is not None:
                progress(start + len(batch), len(records))
        return np.concatenate(parts)

    def _one_current_per_slot(
        self, user_id: str, records: list[MemoryRecord], now: datetime
    ) -> dict[str, MemoryRecord]:
        """The memories (imported or stored) the import retires so that each one-value slot keeps one
        current memory, by id (`import_merge.one_current_per_slot`)."""
        slots: dict[Slot, list[MemoryRecord]] = {}
        for record in records:
            if (slot := slot_of(record)) is not None:
                slots.setdefault(slot, []).append(record)
        retired: dict[str, MemoryRecord] = {}
        for (agent_id, subject, attribute), imported in slots.items():
            where = MemoryFilter(agent_id=agent_id, metadata={"subject": subject, "attribute": attribute})
            ids = {i.id for i in imported}
            found = self.store.list_memories(user_id, where, limit=PAGE)
            stored = [r for r in found if r.scope.agent_id == agent_id and r.id not in ids]
            retired |= {r.id: r for r in one_current_per_slot(imported, stored, now)}
        return retired

    def _existing(self, user_id: str, records: list[MemoryRecord]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for start in range(0, len(records), PAGE):
            found.update((r.id, r) for r in self.store.get(user_id, [r.id for r in records[start : start + PAGE]]))
        return found


def rebase_agent(agent_id: str | None, *, source_user: str, target_user: str) -> str | None:
    """The agent id an imported memory gets in `target_user`'s tenant.

    Plain (untenanted) targets keep the id. For a tenant target, an agent of the target's tenant
    stays, an agent of the document user's tenant moves to the target's tenant, anything else is
    refused: a document cannot attach memories to another tenant's agent.
    """
    target_tenant = owner_prefix(target_user)
    if agent_id is None or target_tenant is None or owner_prefix(agent_id) == target_tenant:
        return agent_id
    source_tenant = owner_prefix(source_user)
    if source_tenant is not None and owner_prefix(agent_id) == source_tenant:
        return f"{target_tenant}:{agent_id.partition(':')[2]}"
    raise InvalidInput(f"the document names agent {agent_id!r}, which is not in the target user's tenant")


def _with_agent(record: MemoryRecord, source_user: str) -> MemoryRecord:
    agent_id = rebase_agent(record.scope.agent_id, source_user=source_user, target_user=record.scope.user_id)
    if agent_id == record.scope.agent_id:
        return record
    return replace(record, scope=Scope(record.scope.user_id, agent_id=agent_id, session_id=record.scope.session_id))


def _version() -> str:
    return installed_version() or "unknown"
