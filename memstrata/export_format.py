"""The user export document (GDPR Art. 15 access / Art. 20 portability), version 2.

One JSON object holds everything memstrata stores about one user: every memory (current, superseded,
compressed and expired alike), every history event, and every item of every namespace (entities,
profile facts, user context, session state, queue entries, lifecycle counters). Vectors are left out
on purpose: they belong to one embedding model, so `import_user` re-embeds with the target's model;
`source.embedder` records which model the exporting store used. Times are ISO 8601 with a UTC offset.
The format is documented field by field in docs/export-format.md (kept in sync by a test).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import InvalidInput
from .models import EventType, HistoryEvent, MemoryKind, MemoryRecord, Scope, content_hash, validate_text
from .storage.base import Item

FORMAT: Literal["memstrata-export"] = "memstrata-export"
VERSION = 2
"""Version 2 writes each memory in the one JSON shape of a memory (`MemoryJSON`), which adds its
`user_id`; version 1 documents (no `user_id` per memory) still import."""


def _same(value: str) -> str | None:
    return value


class Shape(BaseModel):
    """Base of the JSON shapes: unknown fields refused, frozen, times carry a UTC offset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="after")
    @classmethod
    def _aware(cls, value: Any) -> Any:
        if isinstance(value, datetime) and value.tzinfo is None:
            raise ValueError("times must carry a UTC offset (e.g. 2024-03-02T10:00:00+00:00)")
        return value


class MemoryJSON(Shape):
    """The one JSON shape of a memory, without its vector: REST responses and MCP tool results, what
    `MemoryClient` decodes, and each memory of an export document.

    `user_id` and `agent_id` are the ids the reader knows: the store's in an export, the API's (without
    the tenant) over REST and MCP, where a memory shared by every user of an agent has no `user_id`.
    """

    id: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    kind: MemoryKind
    content: str
    context: str = ""
    """Keyword-only text (`MemoryRecord.context`): a turn's preceding turns, a summary's originals. Searched
    by keyword search with the content, so an import without it would find fewer hits and score them
    differently."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    created_at: datetime
    updated_at: datetime
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None
    source_ids: list[str] = Field(default_factory=list)
    access_count: int = Field(0, ge=0)
    last_accessed_at: datetime | None = None
    pinned: bool = False

    @classmethod
    def of(cls, record: MemoryRecord, rename: Callable[[str], str | None] = _same) -> MemoryJSON:
        """The record's JSON; `rename` maps its user and agent ids to the ids the reader knows."""
        scope = record.scope
        return cls(
            id=record.id,
            user_id=rename(scope.user_id),
            agent_id=None if scope.agent_id is None else rename(scope.agent_id),
            session_id=scope.session_id,
            kind=record.kind,
            content=record.content,
            context=record.context or "",
            metadata=record.metadata,
            importance=record.importance,
            created_at=record.created_at,
            updated_at=record.updated_at,
            valid_from=record.valid_from,
            valid_to=record.valid_to,
            superseded_by=record.superseded_by,
            expires_at=record.expires_at,
            source_ids=list(record.source_ids),
            access_count=record.access_count,
            last_accessed_at=record.last_accessed_at,
            pinned=record.pinned,
        )

    def to_record(self, user_id: str) -> MemoryRecord:
        """The record, owned by `user_id` (an import's target user; the user a client asked about)."""
        text = validate_text(self.content)
        return MemoryRecord(
            id=self.id,
            scope=Scope(user_id=user_id, agent_id=self.agent_id, session_id=self.session_id),
            kind=self.kind,
            content=text,
            created_at=self.created_at,
            updated_at=self.updated_at,
            metadata=dict(self.metadata),
            importance=self.importance,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            superseded_by=self.superseded_by,
            expires_at=self.expires_at,
            source_ids=tuple(self.source_ids),
            access_count=self.access_count,
            last_accessed_at=self.last_accessed_at,
            content_hash=content_hash(text),
            pinned=self.pinned,
            context=self.context,
        )


ExportedMemory = MemoryJSON
"""The name export documents of version 1 gave a memory; the same model."""


class HistoryEventJSON(Shape):
    """The one JSON shape of a history event (REST, MCP, the client, the CLI and each event of an export).
    `before`/`after` are null where the text was scrubbed (forget, expiry). The owner is not part of the
    shape: it is the user the events were asked for (or the export's user)."""

    id: str
    memory_id: str
    event: EventType
    at: datetime
    before: str | None = None
    after: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, event: HistoryEvent) -> HistoryEventJSON:
        return cls(
            id=event.id,
            memory_id=event.memory_id,
            event=event.event,
            at=event.at,
            before=event.before,
            after=event.after,
            details=event.details,
        )

    def to_event(self, user_id: str) -> HistoryEvent:
        return HistoryEvent(
            id=self.id,
            memory_id=self.memory_id,
            user_id=user_id,
            event=self.event,
            at=self.at,
            before=self.before,
            after=self.after,
            details=dict(self.details),
        )


ExportedEvent = HistoryEventJSON
"""The name export documents gave a history event; the same model."""


class ExportedItem(Shape):
    """One item: a JSON object stored under (namespace, key)."""

    namespace: str = Field(min_length=1)
    key: str = Field(min_length=1)
    value: dict[str, Any]
    updated_at: datetime

    @classmethod
    def of(cls, item: Item) -> ExportedItem:
        return cls(namespace=item.namespace, key=item.key, value=item.value, updated_at=item.updated_at)


class ExportSource(Shape):
    """Where the export came from."""

    store: str
    """The backend type ("sqlite" or "postgresql"); never its URL."""
    embedder: str
    """The embedding model of the exporting store; vectors are not exported."""
    dimensions: int = Field(ge=1)
    memstrata_version: str


class ExportDocument(Shape):
    """Everything memstrata stores about one user."""

    format: Literal["memstrata-export"] = FORMAT
    version: int = VERSION
    user_id: str
    exported_at: datetime
    source: ExportSource
    memories: list[MemoryJSON] = Field(default_factory=list)
    history: list[HistoryEventJSON] = Field(default_factory=list)
    items: list[ExportedItem] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value < 1 or value > VERSION:
            raise ValueError(f"export version {value} is not supported by this memstrata (reads 1-{VERSION})")
        return value

    @property
    def counts(self) -> dict[str, int]:
        return {"memories": len(self.memories), "history": len(self.history), "items": len(self.items)}

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


def parse_document(raw: ExportDocument | dict[str, Any] | str | bytes) -> ExportDocument:
    """An `ExportDocument` from itself, a dict, or JSON text; `InvalidInput` names what is wrong."""
    from pydantic import ValidationError

    if isinstance(raw, ExportDocument):
        return raw
    try:
        if isinstance(raw, str | bytes):
            return ExportDocument.model_validate_json(raw)
        if isinstance(raw, dict):
            return ExportDocument.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'document'}: {error['msg']}" for error in exc.errors()[:5]
        )
        raise InvalidInput(f"not a valid memstrata export document: {problems}") from None
    raise InvalidInput(f"an export document must be JSON text or a dict, got {type(raw).__name__}")


__all__ = [
    "FORMAT",
    "Shape",
    "VERSION",
    "ExportDocument",
    "ExportSource",
    "ExportedEvent",
    "ExportedItem",
    "ExportedMemory",
    "HistoryEventJSON",
    "MemoryJSON",
    "parse_document",
]
