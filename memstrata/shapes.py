"""The one JSON shape of every type `Memory` returns, declared once.

Each domain type has one pydantic model here (`<Type>JSON`) with `of(value)` (domain object → shape)
and `to_domain(...)` (shape → domain object). REST responses, MCP tool results, `MemoryClient`'s
decoding, the CLI's `--json` output and the export document all use these models, so a field has one
name and one type wherever it travels.

Ids inside a shape are the ids the reader knows: `of(..., rename)` maps store ids (`acme:alice`) to
them (the server passes the tenant's API-id mapping; the CLI and exports keep store ids). The owner of
a report or an event is not in its shape: it is the user the caller asked about, given back to
`to_domain`.

`to_json(value)` is the generic converter: any value `Memory` returns (a domain object, a list of
them, a plain value) as JSON-ready data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, TypeAdapter

from .buffer import Turn
from .export_format import ExportDocument, HistoryEventJSON, MemoryJSON, Shape
from .extraction.resolution import DecisionKind
from .layers.context import Context, ContextPart
from .layers.entities import Entity
from .layers.learning import LearnResult
from .layers.lifecycle import ConsolidationReport, ErasureReceipt, ImportReport, MaintenanceReport, SweepReport
from .layers.procedures import Procedure
from .layers.profile import ProfileFact
from .layers.reconcile import Operation
from .layers.work_queue import JobStatus, QueueStatus
from .models import HistoryEvent, MemoryRecord, Scope, SearchHit

Rename = Callable[[str], str | None]


def _same(value: str) -> str | None:
    return value


def record_of(memory: MemoryJSON, scope: Scope) -> MemoryRecord:
    """The record of a memory's shape; one without a user id (shared by every user of an agent) is
    attributed to the user asked about."""
    return memory.to_record(memory.user_id or scope.user_id)


class MemoryListJSON(Shape):
    """A page of memories, newest first: REST `GET .../memories`, MCP `list_memories`, CLI `list --json`."""

    memories: list[MemoryJSON]
    next_offset: int | None = Field(description="pass as `offset` to get the next page; null on the last page")

    @classmethod
    def of(cls, records: Sequence[MemoryRecord], next_offset: int | None, rename: Rename = _same) -> Self:
        return cls(memories=[MemoryJSON.of(r, rename) for r in records], next_offset=next_offset)

    @classmethod
    def page(cls, records: Sequence[MemoryRecord], *, limit: int, offset: int, rename: Rename = _same) -> Self:
        """The page of `records` read with `limit + 1`: `next_offset` set when there was one more."""
        more = len(records) > limit
        return cls.of(records[:limit], offset + limit if more else None, rename)

    def to_domain(self, scope: Scope) -> list[MemoryRecord]:
        return [record_of(m, scope) for m in self.memories]


class SearchHitJSON(Shape):
    memory: MemoryJSON
    score: float
    scores: dict[str, float] = Field(description="component scores (semantic, keyword, recency, fused...)")
    superseded: bool = Field(
        default=False, description="true if a newer memory replaced this one (only with include_superseded)"
    )

    @classmethod
    def of(cls, hit: SearchHit, rename: Rename = _same) -> Self:
        return cls(
            memory=MemoryJSON.of(hit.memory, rename),
            score=hit.score,
            scores=dict(hit.scores),
            superseded=hit.memory.superseded_by is not None,
        )

    def to_domain(self, scope: Scope) -> SearchHit:
        return SearchHit(memory=record_of(self.memory, scope), score=self.score, scores=dict(self.scores))


class SearchResultJSON(Shape):
    hits: list[SearchHitJSON]


class ProfileFactJSON(Shape):
    category: str
    key: str
    value: str
    updated_at: datetime
    source: str | None = None
    previous: list[dict[str, Any]] = Field(default_factory=list, description="the values it replaced")

    @classmethod
    def of(cls, fact: ProfileFact) -> Self:
        return cls(
            category=fact.category,
            key=fact.key,
            value=fact.value,
            updated_at=fact.updated_at,
            source=fact.source,
            previous=list(fact.previous),
        )

    def to_domain(self) -> ProfileFact:
        return ProfileFact(
            category=self.category,
            key=self.key,
            value=self.value,
            updated_at=self.updated_at,
            source=self.source,
            previous=tuple(self.previous),
        )


class FactsJSON(Shape):
    facts: list[ProfileFactJSON]


class EntityJSON(Shape):
    key: str
    name: str
    type: str
    first_seen: datetime
    last_seen: datetime
    mention_count: int
    summary: str
    aliases: list[str]
    attributes: dict[str, Any]
    memory_ids: list[str]
    summary_built: bool = Field(default=False, description="the summary was built from the linked memories")

    @classmethod
    def of(cls, entity: Entity) -> Self:
        return cls(
            key=entity.key,
            name=entity.name,
            type=entity.type,
            first_seen=entity.first_seen,
            last_seen=entity.last_seen,
            mention_count=entity.mention_count,
            summary=entity.summary,
            aliases=list(entity.aliases),
            attributes=dict(entity.attributes),
            memory_ids=list(entity.memory_ids),
            summary_built=entity.summary_built,
        )

    def to_domain(self) -> Entity:
        return Entity(
            key=self.key,
            name=self.name,
            type=self.type,
            first_seen=self.first_seen,
            last_seen=self.last_seen,
            mention_count=self.mention_count,
            summary=self.summary,
            aliases=tuple(self.aliases),
            attributes=dict(self.attributes),
            memory_ids=tuple(self.memory_ids),
            summary_built=self.summary_built,
        )


class EntitiesJSON(Shape):
    entities: list[EntityJSON]


class ProcedureJSON(Shape):
    type: str = Field(description="instruction or example")
    task: str
    text: str = Field(description="the procedure as the context block renders it")
    memory: MemoryJSON

    @classmethod
    def of(cls, procedure: Procedure, rename: Rename = _same) -> Self:
        return cls(
            type=procedure.type,
            task=procedure.task,
            text=procedure.render(),
            memory=MemoryJSON.of(procedure.memory, rename),
        )

    def to_domain(self, scope: Scope) -> Procedure:
        return Procedure(record_of(self.memory, scope))


class ProceduresJSON(Shape):
    procedures: list[ProcedureJSON]


class ContextPartJSON(Shape):
    name: str
    text: str
    tokens: int
    items: int = 0
    total_items: int = 0


class ContextJSON(Shape):
    text: str = Field(description="the prompt block, within max_tokens")
    tokens: int
    max_tokens: int
    parts: list[ContextPartJSON]
    dropped: list[str] = Field(description="parts that had content but did not fit the budget")

    @classmethod
    def of(cls, context: Context) -> Self:
        parts = [
            ContextPartJSON(name=p.name, text=p.text, tokens=p.tokens, items=p.items, total_items=p.total_items)
            for p in context.parts
        ]
        return cls(
            text=context.text,
            tokens=context.tokens,
            max_tokens=context.max_tokens,
            parts=parts,
            dropped=list(context.dropped),
        )

    def to_domain(self) -> Context:
        parts = tuple(ContextPart(p.name, p.text, p.tokens, p.items, p.total_items) for p in self.parts)
        return Context(self.text, self.tokens, self.max_tokens, parts, tuple(self.dropped))


class OperationJSON(Shape):
    event: DecisionKind = Field(description="add (new), noop (already known), supersede (replaced), update, history")
    memory: MemoryJSON
    replaced_ids: list[str]
    reason: str
    fallback_reason: str | None = Field(default=None, description="why the rules decided instead of the LLM")

    @classmethod
    def of(cls, operation: Operation, rename: Rename = _same) -> Self:
        return cls(
            event=operation.event,
            memory=MemoryJSON.of(operation.memory, rename),
            replaced_ids=list(operation.replaced_ids),
            reason=operation.reason,
            fallback_reason=operation.fallback_reason,
        )

    def to_domain(self, scope: Scope) -> Operation:
        return Operation(
            self.event, record_of(self.memory, scope), tuple(self.replaced_ids), self.reason, self.fallback_reason
        )


class LearnResultJSON(Shape):
    """What one `learn` stored. The candidates the extractor found are not part of it."""

    operations: list[OperationJSON] = Field(description="what was stored")
    extractor: Literal["llm", "rules", "custom"] | None = Field(
        default=None, description="who found the candidates: the LLM, the rules, or a custom extractor"
    )
    fallback_reason: str | None = Field(
        default=None, description="why the rules answered instead of the configured LLM; null when nothing fell back"
    )

    @classmethod
    def of(cls, result: LearnResult, rename: Rename = _same) -> Self:
        return cls(
            operations=[OperationJSON.of(op, rename) for op in result.operations],
            extractor=result.extractor,
            fallback_reason=result.fallback_reason,
        )

    def to_domain(self, scope: Scope) -> LearnResult:
        return LearnResult(
            tuple(op.to_domain(scope) for op in self.operations),
            extractor=self.extractor or "custom",
            fallback_reason=self.fallback_reason,
        )


class ConsolidationReportJSON(Shape):
    eligible: int
    compressed: int
    summaries: list[str] = Field(description="ids of the summaries written")
    method: str
    skipped: str | None = None
    groups: list[dict[str, Any]] = Field(default_factory=list)
    refused: list[dict[str, Any]] = Field(default_factory=list)
    failed: dict[str, Any] | None = None

    @classmethod
    def of(cls, report: ConsolidationReport) -> Self:
        return cls(
            eligible=report.eligible,
            compressed=report.compressed,
            summaries=list(report.summaries),
            method=report.method,
            skipped=report.skipped,
            groups=[dict(g) for g in report.groups],
            refused=[dict(g) for g in report.refused],
            failed=report.failed,
        )

    def to_domain(self, user_id: str) -> ConsolidationReport:
        return ConsolidationReport(
            user_id,
            self.eligible,
            self.compressed,
            tuple(self.summaries),
            self.method,
            self.skipped,
            tuple(self.groups),
            refused=tuple(self.refused),
            failed=self.failed,
        )


class ErasureReceiptJSON(Shape):
    """Proof of an erasure that holds no personal data (the user id only as a salted hash)."""

    request_id: str
    erased_at: datetime
    user_hash: str
    salt: str
    algorithm: str
    counts: dict[str, int]
    duration_ms: float

    @classmethod
    def of(cls, receipt: ErasureReceipt) -> Self:
        return cls.model_validate(receipt.to_value())

    def to_domain(self) -> ErasureReceipt:
        return ErasureReceipt(**self.model_dump())


class ImportReportJSON(Shape):
    memories_written: int
    memories_unchanged: int
    events_written: int
    items_written: int
    items_unchanged: int
    items_skipped: int = 0
    embedder: str

    @classmethod
    def of(cls, report: ImportReport) -> Self:
        return cls(
            memories_written=report.memories_written,
            memories_unchanged=report.memories_unchanged,
            events_written=report.events_written,
            items_written=report.items_written,
            items_unchanged=report.items_unchanged,
            items_skipped=report.items_skipped,
            embedder=report.embedder,
        )

    def to_domain(self, user_id: str) -> ImportReport:
        return ImportReport(user_id, **self.model_dump())


class SweepReportJSON(Shape):
    users: int
    expired: int = 0
    retention: int = 0
    sessions: int = 0
    by_user: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, report: SweepReport) -> Self:
        return cls(
            users=report.users,
            expired=report.expired,
            retention=report.retention,
            sessions=report.sessions,
            by_user=dict(report.by_user),
        )

    def to_domain(self) -> SweepReport:
        return SweepReport(**self.model_dump())


class MaintenanceReportJSON(Shape):
    sweep: SweepReportJSON
    consolidated: dict[str, ConsolidationReportJSON] = Field(
        default_factory=dict, description="the consolidation of each user that was due, by user id"
    )

    @classmethod
    def of(cls, report: MaintenanceReport) -> Self:
        return cls(
            sweep=SweepReportJSON.of(report.sweep),
            consolidated={user: ConsolidationReportJSON.of(r) for user, r in report.consolidated.items()},
        )

    def to_domain(self) -> MaintenanceReport:
        return MaintenanceReport(
            sweep=self.sweep.to_domain(),
            consolidated={user: r.to_domain(user) for user, r in self.consolidated.items()},
        )


class QueueFailureJSON(Shape):
    id: str
    user_id: str | None = None
    status: str
    attempts: int = 0
    error: str | None = None
    created_at: str | None = None

    @classmethod
    def of(cls, failure: dict[str, Any], rename: Rename = _same) -> Self:
        user_id = failure.get("user_id")
        return cls(
            id=str(failure["id"]),
            user_id=rename(user_id) if isinstance(user_id, str) else None,
            status=str(failure["status"]),
            attempts=int(failure.get("attempts", 0)),
            error=failure.get("error"),
            created_at=failure.get("created_at"),
        )


class QueueStatusJSON(Shape):
    counts: dict[str, int]
    failures: list[QueueFailureJSON]

    @classmethod
    def of(cls, status: QueueStatus, rename: Rename = _same) -> Self:
        return cls(counts=dict(status.counts), failures=[QueueFailureJSON.of(f, rename) for f in status.failures])

    def to_domain(self) -> QueueStatus:
        return QueueStatus(counts=dict(self.counts), failures=[f.model_dump() for f in self.failures])


class JobStatusJSON(Shape):
    id: str
    status: str = Field(description="pending, done, failed or expired")
    attempts: int = 0
    error: str | None = None
    created_at: str | None = None
    finished_at: str | None = None

    @classmethod
    def of(cls, job: JobStatus) -> Self:
        return cls(
            id=job.id,
            status=job.status,
            attempts=job.attempts,
            error=job.error,
            created_at=job.created_at,
            finished_at=job.finished_at,
        )

    def to_domain(self) -> JobStatus:
        return JobStatus(**self.model_dump())


class TurnJSON(Shape):
    id: str = Field(description="id of the message's episode memory (its durable, searchable copy)")
    role: str
    content: str
    at: datetime
    speaker: str | None = None

    @classmethod
    def of(cls, turn: Turn) -> Self:
        return cls(id=turn.id, role=turn.role, content=turn.content, at=turn.at, speaker=turn.speaker)

    def to_domain(self) -> Turn:
        return Turn(role=self.role, content=self.content, at=self.at, id=self.id, speaker=self.speaker)


def shape_of(value: Any, rename: Rename = _same) -> BaseModel | None:
    """The shape model of one domain value, or None when `value` is not a domain type."""
    if isinstance(value, BaseModel):
        return value
    renamed: dict[type, Callable[[Any, Rename], BaseModel]] = {
        MemoryRecord: MemoryJSON.of,
        SearchHit: SearchHitJSON.of,
        Procedure: ProcedureJSON.of,
        Operation: OperationJSON.of,
        LearnResult: LearnResultJSON.of,
        QueueStatus: QueueStatusJSON.of,
    }
    plain: dict[type, Callable[[Any], BaseModel]] = {
        HistoryEvent: HistoryEventJSON.of,
        ProfileFact: ProfileFactJSON.of,
        Entity: EntityJSON.of,
        Context: ContextJSON.of,
        ConsolidationReport: ConsolidationReportJSON.of,
        ErasureReceipt: ErasureReceiptJSON.of,
        ImportReport: ImportReportJSON.of,
        SweepReport: SweepReportJSON.of,
        MaintenanceReport: MaintenanceReportJSON.of,
        JobStatus: JobStatusJSON.of,
        Turn: TurnJSON.of,
    }
    kind = type(value)
    if kind in renamed:
        return renamed[kind](value, rename)
    if kind in plain:
        return plain[kind](value)
    return None


def to_json(value: Any, rename: Rename = _same) -> Any:
    """`value` (a domain object, a list or dict of them, or a plain JSON value) as JSON-ready data, each
    domain object in its one shape."""
    model = shape_of(value, rename)
    if model is not None:
        return model.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # no wire shape (e.g. `Candidate`)
        return TypeAdapter(type(value)).dump_python(value, mode="json")
    if isinstance(value, list | tuple):
        return [to_json(v, rename) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v, rename) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


__all__ = [
    "ConsolidationReportJSON",
    "ContextJSON",
    "ContextPartJSON",
    "EntitiesJSON",
    "EntityJSON",
    "ErasureReceiptJSON",
    "ExportDocument",
    "FactsJSON",
    "HistoryEventJSON",
    "ImportReportJSON",
    "JobStatusJSON",
    "LearnResultJSON",
    "MemoryJSON",
    "MaintenanceReportJSON",
    "MemoryListJSON",
    "OperationJSON",
    "ProceduresJSON",
    "ProcedureJSON",
    "ProfileFactJSON",
    "QueueFailureJSON",
    "QueueStatusJSON",
    "Rename",
    "SearchHitJSON",
    "SearchResultJSON",
    "SweepReportJSON",
    "TurnJSON",
    "record_of",
    "shape_of",
    "to_json",
]
