"""How an imported document merges with what the store already holds (pure: no store here).

The rules (docs/export-format.md, "Importing into a store that already holds data"):

* history is never revived: a memory the store holds as superseded keeps its `valid_to` and
  `superseded_by` whatever the document says, and a memory the store deleted (it has a DELETE event)
  is not imported again, nor are the document's history events of it (they would bring back its text);
* a one-value slot (`subject` and `attribute` metadata, the attribute not multi-valued) ends with one
  current memory, the latest in valid time: every other current memory of the slot, from the store or
  from the document, is retired in favour of the next one in valid time (ties: the store's memory wins);
* a history event id the store already holds for another event, or that the document gives to two
  different events, is a collision: the whole import is refused (`InvalidInput` naming the id).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ...errors import InvalidInput
from ...extraction.base import is_multi_valued
from ...models import EventType, HistoryEvent, MemoryRecord
from ..semantic import valid_since

Slot = tuple[str | None, str, str]
"""(agent_id, subject, attribute): where one value holds at a time."""


def kept_retirement(incoming: MemoryRecord, stored: MemoryRecord | None) -> MemoryRecord:
    """The document's record, with the store's retirement when the store holds it as superseded."""
    if stored is None or stored.valid_to is None:
        return incoming
    return replace(incoming, valid_to=stored.valid_to, superseded_by=stored.superseded_by)


def slot_of(record: MemoryRecord) -> Slot | None:
    """The one-value slot a current memory states, or None (no slot, a multi-valued one, or not current)."""
    subject, attribute = record.metadata.get("subject"), record.metadata.get("attribute")
    if record.valid_to is not None or not isinstance(subject, str) or not isinstance(attribute, str):
        return None
    if is_multi_valued(attribute):
        return None
    return (record.scope.agent_id, subject, attribute)


def one_current_per_slot(
    imported: Sequence[MemoryRecord], stored_current: Sequence[MemoryRecord], now: datetime
) -> list[MemoryRecord]:
    """The memories of one slot the import retires: all current ones (imported and stored) but the latest
    in valid time, each ending where the next begins and superseded by it. `stored_current` wins ties."""
    by_id = {r.id: r for r in stored_current}
    by_id |= {r.id: r for r in imported if r.id not in by_id}
    ordered = sorted(by_id.values(), key=lambda r: (valid_since(r), r.id in {s.id for s in stored_current}))
    return [
        replace(old, valid_to=max(valid_since(new), valid_since(old)), superseded_by=new.id, updated_at=now)
        for old, new in zip(ordered, ordered[1:], strict=False)
    ]


def new_events(
    incoming: Iterable[HistoryEvent], known: Mapping[str, HistoryEvent], skipped_memories: set[str]
) -> list[HistoryEvent]:
    """The document's history events the store does not hold yet (by id), without those of
    `skipped_memories`. An id the store or the document already uses for another event is refused."""
    fresh: dict[str, HistoryEvent] = {}
    for event in incoming:
        other = known.get(event.id) or fresh.get(event.id)
        if other is not None:
            if not _same_event(event, other):
                raise InvalidInput(
                    f"history event id {event.id!r} of memory {event.memory_id!r} collides with another event "
                    f"(of memory {other.memory_id!r}); nothing was imported"
                )
            continue
        if event.memory_id not in skipped_memories:
            fresh[event.id] = event
    return list(fresh.values())


def _same_event(a: HistoryEvent, b: HistoryEvent) -> bool:
    """The same event written twice: its memory, type and time (its text may have been scrubbed since)."""
    return (a.memory_id, a.event, a.at) == (b.memory_id, b.event, b.at)


def deleted_memories(history: Iterable[HistoryEvent]) -> set[str]:
    """The ids of memories the store deleted (forgotten or expired): never imported again."""
    return {e.memory_id for e in history if e.event in (EventType.DELETE, EventType.EXPIRE)}


__all__ = ["deleted_memories", "kept_retirement", "new_events", "one_current_per_slot", "slot_of"]
