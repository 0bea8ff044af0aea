"""Reconciliation is serialized per user: concurrent learns end with one current value, no error.

Before, 20 concurrent `learn` calls for one user gave "already superseded" (422) and "deadlock
detected" (503) and left up to 16 contradictory "lives in" facts current. Threads of one process
and two `Memory` objects on one database (as two processes would be) both race here.
"""

from __future__ import annotations

import threading

from memstrata.memory import Memory
from memstrata.storage.base import MemoryFilter
from memstrata.storage.user_lock import user_lock
from tests.security.conftest import Backend

USER = "acme:mover"
LEARNS = 20


def current_locations(memory: Memory) -> list[str]:
    where = MemoryFilter(metadata={"attribute": "location"})
    return [r.content for r in memory.store.list_memories(USER, where, limit=100)]


def race(memories: list[Memory]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(LEARNS)

    def learn(i: int) -> None:
        start.wait()
        try:
            memories[i % len(memories)].learn(f"I live in City{i}.", scope=USER)
        except BaseException as exc:  # noqa: BLE001 - every failure is the finding
            errors.append(exc)

    threads = [threading.Thread(target=learn, args=(i,)) for i in range(LEARNS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


def test_twenty_concurrent_learns_leave_one_current_value(backend: Backend) -> None:
    with backend.memory() as memory:
        assert race([memory]) == []
        [current] = current_locations(memory)
        assert current.startswith("The user lives in City")


def test_concurrent_learns_through_two_store_connections(backend: Backend) -> None:
    with backend.memory() as first, backend.memory() as second:
        assert race([first, second]) == []
        assert len(current_locations(first)) == 1


def test_user_lock_is_reentrant_and_per_user(backend: Backend) -> None:
    with backend.memory() as memory:
        order: list[str] = []
        # the same thread twice: no self-deadlock; another user's lock is free meanwhile
        with user_lock(memory.store, USER), user_lock(memory.store, USER):
            other = threading.Thread(target=lambda: _take(memory, "acme:other", order))
            other.start()
            other.join(10)
            assert order == ["acme:other"]


def _take(memory: Memory, user_id: str, order: list[str]) -> None:
    with user_lock(memory.store, user_id):
        order.append(user_id)
