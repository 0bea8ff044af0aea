"""Domain objects: the nouns every layer and backend shares.

They are frozen dataclasses with no I/O. Validation of user-supplied values
(scope ids, text) lives here so that every entry point applies the same rules.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from .core.storable import check_text
from .errors import InvalidInput

MAX_CONTENT_BYTES = 64 * 1024
"""Largest memory text accepted (64 KiB). Longer text is an error, never silently cut."""

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+\-]{0,127}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


def validate_id(value: object, what: str) -> str:
    """Return `value` if it is a usable identifier, else raise `InvalidInput` naming `what`.

    Ids are 1-128 characters of letters, digits and `_ . : @ + -`, starting with a letter or digit.
    Braces, slashes, spaces and control characters are refused: ids end up in Redis keys
    (where `{...}` is a cluster hash tag), URLs and file names.
    """
    if not isinstance(value, str) or not _ID_PATTERN.match(value):
        raise InvalidInput(
            f"invalid {what} {value!r}: use 1-128 letters, digits or _.:@+- (starting with a letter or digit)"
        )
    return value


def validate_text(value: object, what: str = "content") -> str:
    """Return stripped text, or raise `InvalidInput` for empty, non-string or oversized text."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{what} is empty")
    check_text(text, what)
    size = len(text.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(f"{what} is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes")
    return text


def content_hash(text: str) -> str:
    """Hash of the normalized text (case, whitespace and Unicode form folded), for exact dedup."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def owner_prefix(store_id: str) -> str | None:
    """The tenant part of a tenant-qualified store id (before the first ':'), or None for a plain id.

    The server stores `tenant:user` and `tenant:agent`; ids written through the Python API or the CLI
    usually have no prefix. Two ids with different prefixes never belong to the same tenant.
    """
    prefix, sep, _ = store_id.partition(":")
    return prefix if sep else None


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to: a user, optionally narrowed to an agent and a session."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None

    def __post_init__(self) -> None:
        validate_id(self.user_id, "user_id")
        if self.agent_id is not None:
            validate_id(self.agent_id, "agent_id")
        if self.session_id is not None:
            validate_id(self.session_id, "session_id")

    @classmethod
    def from_storage(cls, user_id: str, agent_id: str | None = None, session_id: str | None = None) -> Scope:
        """Rebuild a scope read back from a store, without re-validating (reserved ids are legal there)."""
        scope = object.__new__(cls)
        object.__setattr__(scope, "user_id", user_id)
        object.__setattr__(scope, "agent_id", agent_id)
        object.__setattr__(scope, "session_id", session_id)
        return scope

    def require_session(self) -> str:
        if self.session_id is None:
            raise InvalidInput("this operation needs a scope with a session_id")
        return self.session_id

    def user_only(self) -> Scope:
        return Scope(user_id=self.user_id)


ScopeLike = Scope | str
"""What every `scope=` parameter accepts: a `Scope` or a bare user id."""


def as_scope(scope: ScopeLike) -> Scope:
    """A `Scope` from a `Scope` or a bare user id (validated)."""
    return scope if isinstance(scope, Scope) else Scope(user_id=scope)


RESERVED_PREFIX = "_"
"""Ids of data that belongs to no end user start with "_", which `validate_id` refuses for users."""


def reserved_scope(name: str, *, agent_id: str | None = None) -> Scope:
    """A scope owned by the system rather than a user: API keys, receipts, agent-wide procedures.

    Its user id is "_" + name, which no caller-supplied user id can be, so end users can never
    address it. `name` itself must be a valid id.
    """
    validate_id(name, "reserved scope name")
    return Scope.from_storage(RESERVED_PREFIX + name, validate_id(agent_id, "agent_id") if agent_id else None)


class MemoryKind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    NOTE = "note"
    TASK = "task"
    EPISODE = "episode"
    SUMMARY = "summary"
    PROCEDURE = "procedure"

    @classmethod
    def parse(cls, value: object) -> MemoryKind:
        try:
            return cls(str(value))
        except ValueError:
            known = ", ".join(k.value for k in cls)
            raise InvalidInput(f"unknown memory kind {value!r}; known kinds: {known}") from None


class EventType(StrEnum):
    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    DELETE = "delete"
    COMPRESS = "compress"
    EXPIRE = "expire"
    IMPORT = "import"


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One stored memory. `valid_to` set means superseded (or compressed): kept, not current."""

    id: str
    scope: Scope
    kind: MemoryKind
    content: str
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None
    source_ids: tuple[str, ...] = ()
    access_count: int = 0
    last_accessed_at: datetime | None = None
    content_hash: str = ""
    pinned: bool = False
    context: str = ""
    """Text around the memory (e.g. the previous turns of its conversation), indexed for keyword search
    at a lower weight so that a reply is found through the question it answers (and, with
    `Settings.context_vector_weight` > 0, mixed into its vector when it is written); never shown as content."""

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    def is_current(self, at: datetime) -> bool:
        """Valid and not expired at `at`."""
        if self.valid_from is not None and self.valid_from > at:
            return False
        if self.valid_to is not None and self.valid_to <= at:
            return False
        return not (self.expires_at is not None and self.expires_at <= at)

    def evolve(self, **changes: Any) -> MemoryRecord:
        return replace(self, **changes)


def new_record(
    *,
    scope: Scope,
    content: str,
    kind: MemoryKind = MemoryKind.FACT,
    metadata: dict[str, Any] | None = None,
    importance: float = 0.5,
    source_ids: tuple[str, ...] = (),
    expires_at: datetime | None = None,
    valid_from: datetime | None = None,
    pinned: bool = False,
    created_at: datetime | None = None,
    memory_id: str | None = None,
    context: str = "",
) -> MemoryRecord:
    """Build a validated new record (text checked, hash computed, timestamps set)."""
    text = validate_text(content)
    if not 0.0 <= importance <= 1.0:
        raise InvalidInput(f"importance must be between 0 and 1, got {importance}")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object (a dict)")
    now = created_at or utcnow()
    return MemoryRecord(
        id=memory_id or new_id(),
        scope=scope,
        kind=kind,
        content=text,
        created_at=now,
        updated_at=now,
        metadata=dict(metadata or {}),
        importance=importance,
        valid_from=valid_from or now,
        expires_at=expires_at,
        source_ids=tuple(source_ids),
        content_hash=content_hash(text),
        pinned=pinned,
        context=context,
    )


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One change to one memory. `before`/`after` hold content; erased after a forget."""

    id: str
    memory_id: str
    user_id: str
    event: EventType
    at: datetime
    before: str | None = None
    after: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def new_event(
    record: MemoryRecord,
    event: EventType,
    *,
    before: str | None = None,
    after: str | None = None,
    at: datetime | None = None,
    **details: Any,
) -> HistoryEvent:
    return HistoryEvent(
        id=new_id(),
        memory_id=record.id,
        user_id=record.user_id,
        event=event,
        at=at or utcnow(),
        before=before,
        after=after,
        details=details,
    )


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A memory with its final score and the components that produced it."""

    memory: MemoryRecord
    score: float
    scores: dict[str, float] = field(default_factory=dict)


__all__ = [
    "MAX_CONTENT_BYTES",
    "EventType",
    "HistoryEvent",
    "MemoryKind",
    "MemoryRecord",
    "Scope",
    "SearchHit",
    "content_hash",
    "new_event",
    "new_id",
    "new_record",
    "ScopeLike",
    "as_scope",
    "reserved_scope",
    "utcnow",
    "validate_id",
    "validate_text",
]
