"""One reconciliation at a time per user: `user_lock(store, user_id)`.

Learning reads a user's current memories, decides (add / supersede / no-op) and writes. Two of those
interleaved for one user decide on the same stale view: both supersede the same old value (the second
finds it already superseded) or both add a new value, leaving contradictory current facts. So the
read-decide-write of a user runs under this lock:

* in the process, a lock per (database URL, user), so threads of one server (and two `Memory`
  objects on one database) queue up; re-entered by the same thread, it is already held;
* across processes, the store's own `Store.user_lock(user_id)`: PostgreSQL holds a
  session-level advisory lock on a connection of its own (never one of the pool, which the locked
  work needs); SQLite locks a byte range of a `-locks` file beside the database (POSIX `lockf`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Store

Key = tuple[str, str]

_GUARD = threading.Lock()
_LOCKS: dict[Key, tuple[threading.Lock, int]] = {}
"""(store url, user id) -> (lock, how many threads hold or wait for it); removed at zero."""
_HELD = threading.local()


@contextmanager
def _local(key: Key) -> Iterator[None]:
    with _GUARD:
        lock, users = _LOCKS.get(key, (threading.Lock(), 0))
        _LOCKS[key] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with _GUARD:
            lock, users = _LOCKS[key]
            if users == 1:
                del _LOCKS[key]
            else:
                _LOCKS[key] = (lock, users - 1)


@contextmanager
def user_lock(store: Store, user_id: str) -> Iterator[None]:
    """Hold the user's reconciliation lock (in this process, then across processes) while inside.
    Keyed by the store's URL, so two store objects on one database share it; re-entrant per thread."""
    key = (store.url, user_id)
    held: set[Key] = _HELD.__dict__.setdefault("keys", set())
    if key in held:  # re-entered by the same thread: the outer call holds both locks
        yield
        return
    with _local(key), store.user_lock(user_id):
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


__all__ = ["user_lock"]
