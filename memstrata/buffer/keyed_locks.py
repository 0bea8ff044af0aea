"""Non-blocking per-session locks, keyed by (user_id, session_id) and created on first use."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Key = tuple[str, str]


class KeyedLocks:
    def __init__(self) -> None:
        self._locks: dict[Key, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def try_acquire(self, key: Key) -> Iterator[bool]:
        """Yield True while holding `key`'s lock, or False at once when another thread holds it."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        acquired = lock.acquire(blocking=False)
        try:
            yield acquired
        finally:
            if acquired:
                lock.release()

    def discard(self, matches: Callable[[Key], bool]) -> None:
        """Forget the locks whose key `matches` (e.g. all of an erased user's)."""
        with self._guard:
            for key in [k for k in self._locks if matches(k)]:
                del self._locks[key]
