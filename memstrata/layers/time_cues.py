"""What the texts of a user's memories say about time, remembered across searches.

The time-aware ranking (`core.temporal`) asks of its best candidates whether their text states a time
(`states_time`) and, for queries that name a period, which periods the text names (`said_periods`, the
date resolver over the text). Both depend on the memory's text and time only, and the same memories come
back as candidates search after search of the same user: on LoCoMo, resolving the texts' dates was most
of what a search naming a period spent ranking (about 3 ms of 3.7). So a semantic layer keeps the answers
per user and memory, keyed by the memory's time and a hash of the text read (a memory whose text or time
changes is read again), and drops a user's answers when the user is erased.

What is kept is no text: a flag and the periods' bounds (`TimeWindow`s without the words that named them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from ..core.temporal import TimeWindow, query_windows, states_time
from ..extraction.dates import find_dates
from ..models import MemoryRecord

TIME_CUE_CHARS = 500
"""How much of a memory's text is read for the times it states (long documents state theirs early)."""
REMEMBERED_CUES = 65_536
"""How many memories' answers a layer keeps in all (a few hundred bytes each); beyond, it starts afresh."""


def said_periods(record: MemoryRecord) -> list[TimeWindow]:
    """The periods a memory's text names ("last Friday"), resolved against the memory's own time."""
    said = record.created_at
    return query_windows(find_dates(record.content[:TIME_CUE_CHARS], said, prefer="past"), said)


@dataclass(slots=True)
class _Cue:
    key: tuple[datetime, int]
    timed: bool
    periods: tuple[TimeWindow, ...] | None = None
    """None until a search asks for them."""


class TimeCues:
    """Per user and memory: whether its text states a time, and the periods it names (`said_periods`)."""

    def __init__(self, limit: int = REMEMBERED_CUES) -> None:
        self._limit = limit
        self._users: dict[str, dict[str, _Cue]] = {}
        self._count = 0

    def states_time(self, record: MemoryRecord) -> bool:
        """`core.temporal.states_time` of the memory's first `TIME_CUE_CHARS` characters."""
        return self._cue(record).timed

    def periods(self, record: MemoryRecord) -> list[TimeWindow]:
        """`said_periods` of the memory when its text states a time (`states_time`, the cheap test read
        first), else none."""
        cue = self._cue(record)
        if not cue.timed:
            return []
        if cue.periods is None:
            cue.periods = tuple(replace(w, text="") for w in said_periods(record))
        return list(cue.periods)

    def remembered(self, user_id: str) -> int:
        """How many of the user's memories have answers kept."""
        return len(self._users.get(user_id, {}))

    def forget_user(self, user_id: str) -> None:
        """Drop what is kept about a user's memories (the user is erased)."""
        self._count -= len(self._users.pop(user_id, {}))

    def forget(self, user_id: str, memory_id: str) -> None:
        """Drop what is kept about one memory (it is deleted)."""
        if self._users.get(user_id, {}).pop(memory_id, None) is not None:
            self._count -= 1

    def _cue(self, record: MemoryRecord) -> _Cue:
        text = record.content[:TIME_CUE_CHARS]
        key = (record.created_at, hash(text))
        known = self._users.get(record.user_id)
        cue = known.get(record.id) if known is not None else None
        if cue is not None and cue.key == key:
            return cue
        if cue is None and self._count >= self._limit:
            self._users.clear()
            self._count = 0
        cue = _Cue(key, states_time(text))
        memories = self._users.setdefault(record.user_id, {})
        self._count += record.id not in memories
        memories[record.id] = cue
        return cue
