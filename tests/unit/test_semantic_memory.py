"""Semantic memory through the `Memory` front door (SQLite, test embedder)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import (
    EmbeddingMismatch,
    EventType,
    InvalidInput,
    Memory,
    MemoryKind,
    MemoryNotFound,
    NewMemory,
    Scope,
    SearchFilter,
    StoreError,
)
from memstrata.embedders.hashing import HashingEmbedder
from tests.support.clock import Clock

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "m.db"


@pytest.fixture
def memory(db: Path, clock: Clock) -> Memory:
    m = Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64), clock=clock)
    yield m
    m.close()


def test_add_get_list(memory: Memory) -> None:
    record = memory.add("Alice prefers short answers", scope="alice", kind="preference", metadata={"src": "chat"})
    assert memory.get(record.id, scope="alice") == record
    assert record.kind is MemoryKind.PREFERENCE and record.metadata == {"src": "chat"}
    assert [r.id for r in memory.list(scope="alice")] == [record.id]
    assert [e.event for e in memory.history(record.id, scope="alice")] == [EventType.ADD]


def test_exact_duplicate_is_not_stored_twice(memory: Memory) -> None:
    first = memory.add("Alice likes tea", scope="alice")
    again = memory.add("  alice LIKES tea ", scope="alice")
    assert again.id == first.id
    assert len(memory.list(scope="alice")) == 1
    assert memory.get(first.id, scope="alice").access_count == 1


def test_add_many_embeds_in_one_batch(memory: Memory) -> None:
    records = memory.add_many([NewMemory("one"), NewMemory("two", kind=MemoryKind.NOTE)], scope="alice")
    assert [r.content for r in records] == ["one", "two"]
    assert sorted(r.content for r in memory.list(scope="alice")) == ["one", "two"]
    assert [r.content for r in memory.list(scope="alice", filters=SearchFilter(kinds="note"))] == ["two"]


def test_update_keeps_history(memory: Memory, clock: Clock) -> None:
    record = memory.add("Alice works at Initech", scope="alice")
    clock.advance(minutes=5)
    updated = memory.update(record.id, scope="alice", content="Alice works at Initrode", importance=0.9)
    assert updated.content == "Alice works at Initrode" and updated.importance == 0.9
    events = memory.history(record.id, scope="alice")
    assert [(e.event, e.before, e.after) for e in events] == [
        (EventType.ADD, None, "Alice works at Initech"),
        (EventType.UPDATE, "Alice works at Initech", "Alice works at Initrode"),
    ]
    assert memory.search("Initrode", scope="alice", strategy="keyword")[0].memory.id == record.id


def test_supersede_hides_old_fact_but_as_of_finds_it(memory: Memory, clock: Clock) -> None:
    old = memory.add("Alice lives in Paris", scope="alice")
    clock.advance(days=10)
    new = memory.supersede(old.id, "Alice lives in Berlin", scope="alice", reason="moved")
    clock.advance(days=1)
    hits = memory.search("where does Alice live", scope="alice")
    assert [h.memory.id for h in hits] == [new.id]
    past = memory.search("where does Alice live", scope="alice", filters=SearchFilter(as_of=T0 + timedelta(days=1)))
    assert [h.memory.id for h in past] == [old.id]
    both = memory.search("Alice lives", scope="alice", filters=SearchFilter(include_superseded=True))
    assert {h.memory.id for h in both} == {old.id, new.id}
    retired = memory.get(old.id, scope="alice")
    assert retired.superseded_by == new.id and retired.valid_to == T0 + timedelta(days=10)
    assert [e.event for e in memory.history(old.id, scope="alice")] == [EventType.ADD, EventType.SUPERSEDE]
    with pytest.raises(InvalidInput, match="already superseded"):
        memory.supersede(old.id, "Alice lives in Rome", scope="alice")


def test_forget_removes_text_everywhere(memory: Memory) -> None:
    record = memory.add("Alice's passport number is X123", scope="alice")
    assert memory.forget(record.id, scope="alice") is True
    assert memory.forget(record.id, scope="alice") is False
    with pytest.raises(MemoryNotFound):
        memory.get(record.id, scope="alice")
    assert memory.search("passport", scope="alice") == []
    events = memory.history(record.id, scope="alice")
    assert [e.event for e in events] == [EventType.ADD, EventType.DELETE]
    assert all("X123" not in (e.before or "") + (e.after or "") for e in events)


@pytest.mark.parametrize(
    "strategy", ["semantic", "keyword", "hybrid", "hybrid_weighted", "hybrid_rrf", "time_weighted"]
)
def test_every_strategy_finds_the_relevant_memory_with_component_scores(memory: Memory, strategy: str) -> None:
    memory.add("Alice plays the cello in an orchestra", scope="alice")
    target = memory.add("Alice is allergic to peanuts", scope="alice")
    memory.add("Bob's favourite food is peanut butter", scope="bob")
    hits = memory.search("peanuts allergy", scope="alice", strategy=strategy, k=2)
    assert hits[0].memory.id == target.id
    assert all(h.memory.user_id == "alice" for h in hits)
    assert strategy in hits[0].scores
    if strategy != "keyword":
        assert "semantic" in hits[0].scores
    if strategy in ("keyword", "hybrid", "hybrid_weighted", "hybrid_rrf"):
        assert "keyword" in hits[0].scores


def test_semantic_threshold(memory: Memory) -> None:
    memory.add("green tea", scope="alice")
    memory.add("car insurance renewal", scope="alice")
    hits = memory.search("green tea", scope="alice", strategy="semantic", threshold=0.7)
    assert [h.memory.content for h in hits] == ["green tea"]
    assert memory.search("xylophone", scope="alice", strategy="semantic", threshold=0.7) == []


def test_filters_on_kind_metadata_and_dates(memory: Memory, clock: Clock) -> None:
    memory.add("trip to Rome planned", scope="alice", kind="event", metadata={"topic": "travel"})
    clock.advance(days=3)
    later = memory.add("trip budget is 2000 euros", scope="alice", kind="note", metadata={"topic": "travel"})
    assert [h.memory.id for h in memory.search("trip", scope="alice", filters=SearchFilter(kinds=["note"]))] == [
        later.id
    ]
    assert len(memory.search("trip", scope="alice", filters=SearchFilter(metadata={"topic": "travel"}))) == 2
    recent = memory.search("trip", scope="alice", filters=SearchFilter(created_after=T0 + timedelta(days=1)))
    assert [h.memory.id for h in recent] == [later.id]
    with pytest.raises(InvalidInput, match="kinds.0: Input should be 'fact'"):
        memory.search("trip", scope="alice", filters=SearchFilter(kinds=["bogus"]))
    with pytest.raises(InvalidInput, match="metadata.bad key;.*should match pattern"):
        memory.search("trip", scope="alice", filters=SearchFilter(metadata={"bad key;": 1}))


def test_time_weighted_prefers_recently_accessed_after_restart(db: Path, clock: Clock) -> None:
    with Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64), clock=clock) as m:
        stale = m.add("project deadline friday", scope="alice")
        clock.advance(hours=1)
        fresh = m.add("project deadline moved to friday", scope="alice")
        clock.advance(hours=200)
        m.search("project deadline moved", scope="alice", strategy="keyword", k=1)  # touches `fresh`
    clock.advance(hours=1)
    with Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64), clock=clock) as reopened:
        assert reopened.get(fresh.id, scope="alice").access_count == 1
        hits = reopened.search("project deadline friday", scope="alice", strategy="time_weighted")
        assert hits[0].memory.id == fresh.id
        assert hits[0].scores["recency"] > next(h for h in hits if h.memory.id == stale.id).scores["recency"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.add("", scope="alice"), "empty"),
        (lambda m: m.add("   ", scope="alice"), "empty"),
        (lambda m: m.add("x" * 1_100_000, scope="alice"), "limit"),
        (lambda m: m.add("ok", scope="bad user id"), "user_id"),
        (lambda m: m.add("ok", scope=Scope("alice", session_id="{x}")), "session_id"),
        (lambda m: m.add("ok", scope="alice", kind="nope"), "kind"),
        (lambda m: m.add("ok", scope="alice", importance=3), "importance"),
        (lambda m: m.search("", scope="alice"), "query"),
        (lambda m: m.search("x", scope="alice", k=0), "k must"),
        (lambda m: m.search("x", scope="alice", strategy="magic"), "strategy"),
    ],
    ids=["empty", "blank", "huge", "bad-user", "brace-session", "kind", "importance", "empty-query", "k0", "strategy"],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(memory: Memory, call, message: str) -> None:
    memory.add("keep me", scope="alice")
    with pytest.raises(InvalidInput, match=message):
        call(memory)
    assert [r.content for r in memory.list(scope="alice")] == ["keep me"]


def test_wrong_embedding_dimension_is_refused(db: Path) -> None:
    with Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64)) as m:
        m.add("keep me", scope="alice")
    with pytest.raises(EmbeddingMismatch, match="hashing-64"):
        Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(32))
    with Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64)) as m:
        assert [r.content for r in m.list(scope="alice")] == ["keep me"]


def test_corrupt_db_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="corrupt.db"):
        Memory(store=f"sqlite:///{path}", embedder=HashingEmbedder(64))
    assert path.read_bytes() == b"this is not a database" * 100


def test_locked_db_is_a_store_error_and_data_survives(db: Path) -> None:
    with Memory(store=f"sqlite:///{db}", embedder=HashingEmbedder(64)) as m:
        m.add("keep me", scope="alice")
        m.store._conn.execute("PRAGMA busy_timeout = 100")  # type: ignore[attr-defined]
        blocker = sqlite3.connect(db)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreError, match="locked"):
                m.add("blocked write", scope="alice")
        finally:
            blocker.rollback()
            blocker.close()
        assert [r.content for r in m.list(scope="alice")] == ["keep me"]
