"""Lifecycle policies wired into the write path: TTL per kind and consolidation every N turns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstrata import Memory, MemoryKind, Scope, Settings
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.lifecycle.consolidation import STATE_KEY
from memstrata.namespaces import LIFECYCLE

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_default_ttl_per_kind_stamps_expires_at(tmp_path: Path) -> None:
    settings = Settings(ttl_days={"event": 7})
    with Memory(
        store=f"sqlite:///{tmp_path / 'p.db'}", embedder=HashingEmbedder(64), settings=settings, clock=lambda: T0
    ) as memory:
        event = memory.add("concert on Friday", scope="alice", kind=MemoryKind.EVENT)
        fact = memory.add("Alice lives in Paris", scope="alice")
        explicit = memory.add("sale ends", scope="alice", kind="event", expires_at=T0 + timedelta(days=1))
    assert event.expires_at == T0 + timedelta(days=7)
    assert fact.expires_at is None
    assert explicit.expires_at == T0 + timedelta(days=1)


def test_messages_count_towards_the_consolidation_policy(tmp_path: Path) -> None:
    settings = Settings(consolidate_every_turns=5)
    with Memory(store=f"sqlite:///{tmp_path / 'p.db'}", embedder=HashingEmbedder(64), settings=settings) as memory:
        session = Scope("alice", session_id="s1")
        for n in range(3):
            memory.add_message("user", f"message {n}", scope=session)
        # counted in this process: the state is written once every 5 turns, not on each turn
        assert memory.store.get_item("alice", LIFECYCLE, STATE_KEY) is None
        memory.add_messages([{"role": "user", "content": f"later {n}"} for n in range(2)], scope=session)
        state = memory.store.get_item("alice", LIFECYCLE, STATE_KEY)
        assert state is not None and state.value == {"turns": 5, "queued": True}  # queued, not run inline
        assert memory.process_queue() == 1
        state = memory.store.get_item("alice", LIFECYCLE, STATE_KEY)
        assert state is not None and state.value["turns"] == 0 and "last_run_at" in state.value
