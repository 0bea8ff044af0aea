"""The session buffer contract: the last turns of each session, kept close to the conversation.

The buffer is a cache. The durable truth of a session is its episode log (every message, in the
store) plus the fold marker of its rolling summary; when a buffer loses a session (TTL expiry,
Redis restart without persistence, a new process with an in-process buffer) the conversation
layer rebuilds the recent turns from that truth. Implementations: `InProcessBuffer` (default)
and `RedisBuffer` (production: shared by processes, survives application restarts).

Keys are per user first: `user:{<user_id>}:session:<session_id>` (the braces make the user id a
Redis Cluster hash tag, so one user's keys live on one shard and can be erased together).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInput
from ..models import Scope

DEFAULT_TTL_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a session as the buffer keeps it.

    `id` is the id of the message's episode memory (its durable copy); `at` is when it was said.
    """

    role: str
    content: str
    at: datetime
    id: str = ""
    speaker: str | None = None

    def to_json(self) -> str:
        """One line of JSON that begins with `head()`: the id is always the first field."""
        data: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "at": self.at.isoformat(),
        }
        if self.speaker:
            data["speaker"] = self.speaker
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def head(self) -> str:
        """The start of `to_json()` up to and including the id (`{"id":"t1",`), '' without an id: two
        serialized turns begin with the same head exactly when their ids are equal (a JSON string ends
        at its first unescaped quote), so a store of serialized turns can find a turn by id as text."""
        if not self.id:
            return ""
        return '{"id":' + json.dumps(self.id, ensure_ascii=False) + ","

    @classmethod
    def from_json(cls, raw: str | bytes) -> Turn:
        data = json.loads(raw)
        return cls(
            role=str(data["role"]),
            content=str(data["content"]),
            at=datetime.fromisoformat(data["at"]),
            id=str(data.get("id", "")),
            speaker=data.get("speaker"),
        )


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append left in the buffer: the session's turns (oldest first) and whether the
    session already existed in the buffer before this append (False after expiry or loss)."""

    turns: list[Turn]
    existed: bool


@runtime_checkable
class Buffer(Protocol):
    """Per-session lists of recent turns, with an idle TTL refreshed on every write.

    Every method raises `BufferUnavailable` (naming `url`, without password) when the backend fails.
    """

    url: str
    """Where the buffer lives, password redacted."""

    ttl_seconds: float | None
    """Idle lifetime of a session's list; None keeps it until cleared."""

    def append(self, scope: Scope, turns: Sequence[Turn], *, max_turns: int) -> AppendResult:
        """Append `turns`, keep only the newest `max_turns`, refresh the TTL; atomically.

        Idempotent by turn id: a turn whose id the session already holds is skipped, so retrying an
        append that raised `BufferUnavailable` (it may have been applied, e.g. on a Redis primary that
        then failed over) keeps one copy. Only the turns still held count: a turn already trimmed
        out of the window, or folded away by `trim_through`, would be appended again. Turns without
        an id are always appended."""
        ...

    def window(self, scope: Scope) -> list[Turn] | None:
        """The session's turns, oldest first; None when the buffer does not hold the session."""
        ...

    def replace(self, scope: Scope, turns: Sequence[Turn]) -> None:
        """Set the session's turns (a rebuild from the episode log); an empty list removes it."""
        ...

    def trim_through(self, scope: Scope, turn_id: str) -> int:
        """Drop the oldest turns up to and including the one with `turn_id` (after a summary fold);
        return how many were dropped (0 if the id is not there)."""
        ...

    def fold_lock(self, scope: Scope) -> AbstractContextManager[bool]:
        """A non-blocking lock on the session's summary fold: yields True if this caller holds it."""
        ...

    def clear_session(self, scope: Scope) -> bool:
        """Forget one session; True if it was held."""
        ...

    def clear_user(self, user_id: str) -> int:
        """Forget every key of a user (erasure); return how many keys were removed."""
        ...

    def close(self) -> None: ...


def unheld(held: Sequence[Turn], turns: Sequence[Turn]) -> list[Turn]:
    """The turns of `turns` to append after `held`: those whose id is neither held nor earlier in
    `turns`, in order. A turn's id is its episode's id, so a retried append (the first attempt raised
    but may have been applied) adds nothing twice; a turn without an id ('') is always kept."""
    seen = {t.id for t in held if t.id}
    fresh = []
    for turn in turns:
        if not turn.id:
            fresh.append(turn)
        elif turn.id not in seen:
            seen.add(turn.id)
            fresh.append(turn)
    return fresh


def check_ttl(ttl_seconds: float | None) -> float | None:
    """None or 0 mean "no expiry"; a negative or non-number TTL is refused."""
    if ttl_seconds is None or ttl_seconds == 0:
        return None
    if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float) or ttl_seconds < 0:
        raise InvalidInput(f"buffer TTL must be a positive number of seconds, got {ttl_seconds!r}")
    return float(ttl_seconds)


def check_max_turns(max_turns: int) -> int:
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise InvalidInput(f"max_turns must be a positive integer, got {max_turns!r}")
    return max_turns


def session_id_of(scope: Scope) -> str:
    return scope.require_session()


def session_key(prefix: str, scope: Scope) -> str:
    """`{prefix}user:{<user_id>}:session:<session_id>`."""
    return f"{prefix}user:{{{scope.user_id}}}:session:{session_id_of(scope)}"


def fold_lock_key(prefix: str, scope: Scope) -> str:
    """The fold lock of a session; under the user's hash tag, never equal to a session key."""
    return f"{prefix}user:{{{scope.user_id}}}:fold-lock:{session_id_of(scope)}"


def user_key_prefix(prefix: str, user_id: str) -> str:
    return f"{prefix}user:{{{user_id}}}:"


def batched(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


__all__ = [
    "DEFAULT_TTL_SECONDS",
    "AppendResult",
    "Buffer",
    "Turn",
    "check_max_turns",
    "check_ttl",
    "fold_lock_key",
    "session_key",
    "unheld",
    "user_key_prefix",
]
