"""Expiry and retention sweeps: delete what expired, with EXPIRE history events and scrubbed history.

A memory goes when its `expires_at` has passed, or when its kind has a retention (`ttl_days`,
`episode_retention_days`) and it was created longer ago than that — superseded and compressed
memories included. Deletion goes through `Store.delete`, which removes the row, its vector and its
full-text entry and nulls the text of every history event of the memory (as `forget` does); the
EXPIRE event says why, without any text. Session state older than `session_retention_days` goes too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from ... import namespaces
from ...models import EventType, HistoryEvent, MemoryKind, new_id
from ...storage.base import Store
from ._paging import EVERYTHING, all_items, all_memories
from .policy import LifecyclePolicy

BATCH = 500


@dataclass(frozen=True, slots=True)
class SweepReport:
    users: int
    expired: int = 0
    """Memories removed because their `expires_at` passed."""
    retention: int = 0
    """Memories removed because their kind's retention passed."""
    sessions: int = 0
    """Session state items removed after `session_retention_days`."""
    by_user: dict[str, int] = field(default_factory=dict)
    """Removals per user, for users that had any."""


class Sweeper:
    def __init__(self, *, store: Store, clock: Callable[[], datetime], policy: LifecyclePolicy) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy

    def sweep(self, user_ids: Sequence[str]) -> SweepReport:
        now = self.clock()
        totals = {"expired": 0, "retention": 0, "sessions": 0}
        by_user: dict[str, int] = {}
        for user_id in user_ids:
            counts = self._sweep_user(user_id, now)
            for key, value in counts.items():
                totals[key] += value
            if any(counts.values()):
                by_user[user_id] = sum(counts.values())
        return SweepReport(users=len(user_ids), by_user=by_user, **totals)

    def _sweep_user(self, user_id: str, now: datetime) -> dict[str, int]:
        reasons = self._expired(user_id, now)
        for kind, age in self.policy.retention().items():
            old = replace(EVERYTHING, kinds=(kind,), created_before=now - age, as_of=now)
            for record in all_memories(self.store, user_id, old):
                reasons.setdefault(record.id, ("retention", kind))
        ids = sorted(reasons)
        for start in range(0, len(ids), BATCH):
            batch = ids[start : start + BATCH]
            events = [_expire_event(user_id, i, *reasons[i], now) for i in batch]
            self.store.delete(user_id, batch, events)
        why = [reason for reason, _ in reasons.values()]
        return {
            "expired": why.count("expired"),
            "retention": why.count("retention"),
            "sessions": self._sweep_sessions(user_id, now),
        }

    def _expired(self, user_id: str, now: datetime) -> dict[str, tuple[str, MemoryKind]]:
        """Memories whose `expires_at` passed. Two counts tell whether there are any before a full scan."""
        everything = replace(EVERYTHING, as_of=now)
        live = replace(everything, include_expired=False)
        if self.store.count_memories(user_id, everything) == self.store.count_memories(user_id, live):
            return {}
        return {
            r.id: ("expired", r.kind)
            for r in all_memories(self.store, user_id, everything)
            if r.expires_at is not None and r.expires_at <= now
        }

    def _sweep_sessions(self, user_id: str, now: datetime) -> int:
        days = self.policy.session_retention_days
        if days is None:
            return 0
        cutoff = now - timedelta(days=days)
        stale = [i.key for i in all_items(self.store, user_id, namespaces.SESSION) if i.updated_at < cutoff]
        return sum(1 for key in stale if self.store.delete_item(user_id, namespaces.SESSION, key))


def _expire_event(user_id: str, memory_id: str, reason: str, kind: MemoryKind, at: datetime) -> HistoryEvent:
    return HistoryEvent(
        id=new_id(),
        memory_id=memory_id,
        user_id=user_id,
        event=EventType.EXPIRE,
        at=at,
        details={"reason": reason, "kind": kind.value},
    )
