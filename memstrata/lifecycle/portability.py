"""Export (GDPR Art. 15/20) and import of one user, between any two stores.

`export_user` reads every memory (current, superseded, compressed, expired), every history event and
every item of every namespace into an `ExportDocument` (docs/export-format.md). Vectors are not
exported; `import_user` re-embeds with the target's embedder, so SQLite ↔ Postgres and a change of
embedding model both work. Import is idempotent: ids are kept, records and items already stored
identically are skipped, and history events already present (by id) are not added again — importing
the same document twice changes nothing.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..embedders.base import Embedder
from ..export_format import (
    ExportDocument,
    ExportedEvent,
    ExportedItem,
    ExportedMemory,
    ExportSource,
    parse_document,
)
from ..models import EventType, MemoryRecord, new_event, validate_id
from ..storage.base import Store
from ._paging import PAGE, all_items, all_memories, user_namespaces

EMBED_BATCH = 128


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
            store=self.store.url.split("://", 1)[0], embedder=self.embedder.name,
            dimensions=self.embedder.dimensions, memstrata_version=_version(),
        )  # fmt: skip
        return ExportDocument(
            user_id=user_id,
            exported_at=self.clock(),
            source=source,
            memories=[ExportedMemory.of(r) for r in all_memories(self.store, user_id)],
            history=[ExportedEvent.of(e) for e in self.store.all_history(user_id)],
            items=items,
        )

    def import_(self, document: ExportDocument | dict[str, Any] | str | bytes, user_id: str | None) -> ImportReport:
        doc = parse_document(document)
        target = validate_id(user_id or doc.user_id, "user_id")
        records = [m.to_record(target) for m in doc.memories]
        existing = self._existing(target, records)
        changed = [r for r in records if existing.get(r.id) != r]
        for start in range(0, len(changed), EMBED_BATCH):
            batch = changed[start : start + EMBED_BATCH]
            self.store.save(target, batch, (), self.embedder.embed_documents([r.content for r in batch]))
        known = {e.id for e in self.store.all_history(target)}
        events = [e.to_event(target) for e in doc.history if e.id not in known]
        # A memory that arrives without any history (a hand-written document) gets an IMPORT event.
        with_history = {e.memory_id for e in doc.history}
        now = self.clock()
        events += [
            new_event(r, EventType.IMPORT, after=r.content, at=now, source=doc.source.store)
            for r in changed
            if r.id not in with_history and r.id not in existing
        ]
        if events:
            self.store.save(target, (), events)
        written = 0
        for item in doc.items:
            current = self.store.get_item(target, item.namespace, item.key)
            if current is None or current.value != item.value:
                self.store.put_item(target, item.namespace, item.key, item.value)
                written += 1
        return ImportReport(
            target, len(changed), len(records) - len(changed), len(events), written, len(doc.items) - written,
            self.embedder.name,
        )  # fmt: skip

    def _existing(self, user_id: str, records: list[MemoryRecord]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for start in range(0, len(records), PAGE):
            found.update((r.id, r) for r in self.store.get(user_id, [r.id for r in records[start : start + PAGE]]))
        return found


def _version() -> str:
    try:
        return importlib.metadata.version("memstrata")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
