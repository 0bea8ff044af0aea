"""Access bookkeeping runs off the search path, in order, and is flushed before reads."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import StoreError
from memstrata.layers.access import AccessRecorder
from memstrata.models import Scope
from memstrata.storage.sqlite import SQLiteStore

AT = datetime(2026, 5, 1, tzinfo=UTC)


class GatedStore(SQLiteStore):
    """A real SQLite store whose access writes wait for a gate (to observe the background thread)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.writes: list[tuple[str, tuple[str, ...]]] = []
        self.fail = False

    def record_access(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        self.gate.wait(timeout=10)
        if self.fail:
            raise StoreError("disk full")
        self.writes.append((user_id, tuple(ids)))
        super().record_access(user_id, ids, at)


def test_record_returns_before_the_write_and_flush_waits_for_it(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "a.db")
    recorder = AccessRecorder(store)
    recorder.record("alice", ["m1"], AT)
    recorder.record("alice", ["m2", "m3"], AT)
    assert store.writes == []  # the search did not wait
    store.gate.set()
    recorder.flush()
    assert store.writes == [("alice", ("m1",)), ("alice", ("m2", "m3"))]  # in order
    recorder.close()
    recorder.record("bob", ["m4"], AT)  # after close: written at once
    assert store.writes[-1] == ("bob", ("m4",))
    store.close()


def test_a_failed_write_is_counted_and_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = GatedStore(tmp_path / "b.db")
    store.gate.set()
    store.fail = True
    recorder = AccessRecorder(store)
    recorder.record("alice", ["m1"], AT)
    recorder.flush()
    assert recorder.failures == 1 and "could not record the access" in caplog.text
    recorder.close()
    store.close()


def test_close_writes_what_is_pending(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "c.db")
    recorder = AccessRecorder(store)
    for i in range(20):
        recorder.record("alice", [f"m{i}"], AT)
    store.gate.set()
    recorder.close()
    assert len(store.writes) == 20
    store.close()


def test_search_then_read_sees_the_access(tmp_path: Path) -> None:
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64)) as memory:
        record = memory.add("Alice drinks green tea", scope=Scope("alice"))
        assert memory.search("green tea", scope=Scope("alice"))[0].memory.id == record.id
        assert memory.get(record.id, scope="alice").access_count == 1
        memory.search("green tea", scope=Scope("alice"))
        assert memory.list(scope=Scope("alice"))[0].access_count == 2
        assert memory.export_user(scope="alice").memories[0].access_count == 2
