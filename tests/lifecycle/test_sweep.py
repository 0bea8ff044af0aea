"""Expiry and retention sweeps: what goes, what stays, and what history keeps (no text)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import Any

from memstrata import EventType, MemoryKind, NewMemory, SearchFilter
from memstrata.layers.lifecycle import LifecyclePolicy
from memstrata.models import utcnow
from tests.lifecycle.conftest import T0, Clock, use_policy

USER = "alice"


def test_expired_memories_are_deleted_with_scrubbed_history(memory: Any, clock: Clock) -> None:
    gone = memory.add("Alice's door code is 4812", scope=USER, expires_at=T0 + timedelta(hours=1))
    memory.update(gone.id, scope=USER, content="Alice's door code is 9931")
    kept = memory.add("Alice likes jazz", scope=USER, expires_at=T0 + timedelta(days=3650))
    forever = memory.add("Alice was born in Porto", scope=USER)
    clock.advance(hours=2)
    assert {r.id for r in memory.list(scope=USER)} == {
        kept.id,
        forever.id,
    }  # expired: hidden before the sweep
    report = memory.sweep(scope=USER)
    assert (report.expired, report.retention, report.by_user) == (1, 0, {USER: 1})
    assert memory.store.get(USER, [gone.id]) == []
    assert {r.id for r in memory.list(scope=USER, filters=SearchFilter(include_expired=True))} == {kept.id, forever.id}
    events = memory.history(gone.id, scope=USER)
    assert [e.event for e in events] == [EventType.ADD, EventType.UPDATE, EventType.EXPIRE]
    assert all(e.before is None and e.after is None for e in events)
    assert events[-1].details == {"reason": "expired", "kind": "fact"}
    with sqlite3.connect(memory.store.path) as raw:
        rows = raw.execute("SELECT before, after FROM history").fetchall()
    assert not any("4812" in str(row) or "9931" in str(row) for row in rows)


def test_ttl_per_kind_and_episode_retention(memory: Any) -> None:
    old_task = memory.add("Call the plumber", scope=USER, kind="task", created_at=T0 - timedelta(days=31))
    new_task = memory.add("Renew passport", scope=USER, kind="task", created_at=T0 - timedelta(days=29))
    old_turn = memory.add("user: hi there", scope=USER, kind="episode", created_at=T0 - timedelta(days=91))
    new_turn = memory.add("user: hello", scope=USER, kind="episode", created_at=T0 - timedelta(days=89))
    fact = memory.add("Alice has a cat", scope=USER, created_at=T0 - timedelta(days=400))
    # written before the policy existed (no expires_at): retention finds them by age
    memory = use_policy(memory, ttl_days={MemoryKind.TASK: 30}, episode_retention_days=90)
    report = memory.sweep(scope=USER)
    assert (report.expired, report.retention) == (0, 2)
    left = {r.id for r in memory.list(scope=USER, filters=SearchFilter(include_expired=True, include_superseded=True))}
    assert left == {new_task.id, new_turn.id, fact.id}
    assert memory.history(old_task.id, scope=USER)[-1].details == {"reason": "retention", "kind": "task"}
    assert memory.history(old_turn.id, scope=USER)[-1].event is EventType.EXPIRE


def test_retention_covers_superseded_versions(memory: Any) -> None:
    first = memory.add("Alice works at Initech", scope=USER, created_at=T0 - timedelta(days=20))
    memory.supersede(first.id, "Alice works at Globex", scope=USER)
    memory = use_policy(memory, ttl_days={MemoryKind.FACT: 10})
    assert memory.sweep(scope=USER).retention == 1
    assert [r.content for r in memory.list(scope=USER, filters=SearchFilter(include_superseded=True))] == [
        "Alice works at Globex"
    ]


def test_session_state_retention(memory: Any, clock: Clock) -> None:
    memory = use_policy(memory, session_retention_days=7)
    clock.now = utcnow()  # stores stamp items with the wall clock
    memory.store.put_item(USER, "session", "s1", {"summary": "talked about tea"})
    memory.store.put_item(USER, "session", "s2", {"summary": "talked about coffee"})
    memory.store.put_item(USER, "entity", "dana", {"name": "Dana"})
    clock.advance(days=6)
    assert memory.sweep(scope=USER).sessions == 0
    clock.advance(days=2)
    assert memory.sweep(scope=USER).sessions == 2
    assert memory.store.list_items(USER, "session") == []
    assert [i.key for i in memory.store.list_items(USER, "entity")] == ["dana"]


def test_sweep_every_user_and_default_expiry(memory: Any, clock: Clock) -> None:
    for user in ("alice", "bob"):
        memory.add_many([NewMemory("temporary note", expires_at=T0 + timedelta(minutes=1))], scope=user)
    memory.add("kept", scope="carol")
    clock.advance(minutes=2)
    report = memory.sweep()
    assert (report.users, report.expired, report.by_user) == (3, 2, {"alice": 1, "bob": 1})
    policy = LifecyclePolicy(ttl_days={MemoryKind.EVENT: 5}, episode_retention_days=3)
    assert policy.default_expiry(MemoryKind.EVENT, T0) == T0 + timedelta(days=5)
    assert policy.default_expiry(MemoryKind.EPISODE, T0) == T0 + timedelta(days=3)
    assert policy.default_expiry(MemoryKind.FACT, T0) is None


def test_policy_from_settings_reads_optional_fields() -> None:
    class FakeSettings:
        ttl_days = {"task": 30}
        episode_retention_days = 365
        consolidate_every_turns = 0
        consolidate_kinds = ["fact", "event"]
        consolidate_window = "week"

    policy = LifecyclePolicy.from_settings(FakeSettings())
    assert policy.ttl_days == {MemoryKind.TASK: 30.0} and policy.consolidate_every_turns is None
    assert policy.consolidate_kinds == (MemoryKind.FACT, MemoryKind.EVENT)
    assert policy.consolidate_min_count == 10 and policy.consolidate_older_than_days == 30
