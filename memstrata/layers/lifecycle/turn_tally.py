"""Conversation turns counted in this process and not yet written to the user's consolidation state.

The turn policy ("consolidate every N turns") needs a count per user, not a write per turn: counting
each message as a read and a write of the user's consolidation state made adding a message three store
calls longer (the state read, the state write, and the erasure fence of that write). `TurnTally` keeps
the count in memory and gives it up once it reaches N; only then is the state read and written.

What that means across processes and restarts: each process counts the turns it saw, so a user is
consolidated once some process has counted N of the user's turns since its last flush, and a process
that stops forgets fewer than N counted turns, which only postpones the next consolidation (the turns
themselves are in the episode log). The tally holds at most `limit` users; the least recently counted
user's tally is dropped past that.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_TALLIED_USERS = 10_000


class TurnTally:
    """Thread-safe per-user turn counts, bounded to `limit` users."""

    def __init__(self, limit: int = MAX_TALLIED_USERS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self._limit = limit
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, user_id: str, turns: int, every: int) -> int:
        """Count `turns` more turns of the user. When the user's tally reaches `every`, return it and
        start again from 0 (the caller writes it to the stored state); else return 0."""
        with self._lock:
            count = self._counts.pop(user_id, 0) + turns
            if count >= every:
                return count
            self._counts[user_id] = count
            while len(self._counts) > self._limit:
                self._counts.popitem(last=False)
            return 0

    def give_back(self, user_id: str, turns: int) -> None:
        """Return `turns` taken by `add` whose write failed, so that they count towards the next one."""
        with self._lock:
            self._counts[user_id] = self._counts.pop(user_id, 0) + turns

    def forget(self, user_id: str) -> None:
        """Drop the user's tally (the user was erased: an erased user's turns count for nobody)."""
        with self._lock:
            self._counts.pop(user_id, None)

    def pending(self, user_id: str) -> int:
        """Turns of the user counted and not yet given up."""
        with self._lock:
            return self._counts.get(user_id, 0)
