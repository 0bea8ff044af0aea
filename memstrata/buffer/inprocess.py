"""`InProcessBuffer`: session buffers in this process's memory (the default, `memory://`).

Thread-safe. Sessions expire after `ttl_seconds` without a write (checked lazily, swept on writes).
Nothing survives the process; the conversation layer rebuilds a lost session from the episode log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from ..models import Scope, utcnow, validate_id
from .base import DEFAULT_TTL_SECONDS, AppendResult, Turn, check_max_turns, check_ttl, session_id_of, unheld
from .keyed_locks import KeyedLocks

_SWEEP_EVERY = 256


@dataclass
class _Session:
    turns: list[Turn] = field(default_factory=list)
    expires_at: float | None = None


class InProcessBuffer:
    """Recent turns per (user, session) in a dict, with idle expiry."""

    url = "memory://"

    def __init__(
        self,
        *,
        ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`clock` is the Memory's clock (timezone-aware datetimes); idle expiry is measured on it."""
        self.ttl_seconds = check_ttl(ttl_seconds)
        self._clock = clock
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._fold_locks = KeyedLocks()
        self._lock = threading.Lock()
        self._writes = 0

    def __repr__(self) -> str:
        return f"InProcessBuffer(ttl_seconds={self.ttl_seconds}, sessions={len(self._sessions)})"

    def _now(self) -> float:
        return self._clock().timestamp()

    @staticmethod
    def _key(scope: Scope) -> tuple[str, str]:
        return (scope.user_id, session_id_of(scope))

    def _live(self, key: tuple[str, str]) -> _Session | None:
        session = self._sessions.get(key)
        if session is not None and session.expires_at is not None and session.expires_at <= self._now():
            del self._sessions[key]
            return None
        return session

    def _touch(self, session: _Session) -> None:
        session.expires_at = None if self.ttl_seconds is None else self._now() + self.ttl_seconds
        self._writes += 1
        if self._writes % _SWEEP_EVERY == 0:
            now = self._now()
            for key in [k for k, s in self._sessions.items() if s.expires_at is not None and s.expires_at <= now]:
                del self._sessions[key]

    def append(self, scope: Scope, turns: Sequence[Turn], *, max_turns: int) -> AppendResult:
        check_max_turns(max_turns)
        key = self._key(scope)
        with self._lock:
            session = self._live(key)
            existed = session is not None
            if session is None:
                session = self._sessions[key] = _Session()
            session.turns.extend(unheld(session.turns, turns))  # a retried turn is kept once
            del session.turns[:-max_turns]
            self._touch(session)
            return AppendResult(list(session.turns), existed)

    def window(self, scope: Scope) -> list[Turn] | None:
        with self._lock:
            session = self._live(self._key(scope))
            return None if session is None else list(session.turns)

    def replace(self, scope: Scope, turns: Sequence[Turn]) -> None:
        key = self._key(scope)
        with self._lock:
            if not turns:
                self._sessions.pop(key, None)
                return
            session = self._sessions[key] = _Session(list(turns))
            self._touch(session)

    def trim_through(self, scope: Scope, turn_id: str) -> int:
        with self._lock:
            session = self._live(self._key(scope))
            if session is None:
                return 0
            ids = [t.id for t in session.turns]
            if turn_id not in ids:
                return 0
            count = ids.index(turn_id) + 1
            del session.turns[:count]
            if session.turns:
                self._touch(session)
            else:
                del self._sessions[self._key(scope)]
            return count

    @contextmanager
    def fold_lock(self, scope: Scope) -> Iterator[bool]:
        with self._fold_locks.try_acquire(self._key(scope)) as acquired:
            yield acquired

    def clear_session(self, scope: Scope) -> bool:
        with self._lock:
            return self._sessions.pop(self._key(scope), None) is not None

    def clear_user(self, user_id: str) -> int:
        validate_id(user_id, "user_id")
        with self._lock:
            keys = [k for k in self._sessions if k[0] == user_id]
            for key in keys:
                del self._sessions[key]
            self._fold_locks.discard(lambda key: key[0] == user_id)
            return len(keys)

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()
