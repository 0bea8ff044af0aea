"""Memory that learns: extraction → resolution → writes, entity and profile updates.

For each candidate an extractor proposes, the user's similar *current* memories are gathered (by
vector similarity and by the same subject/attribute slot), `core.resolution.decide` picks NOOP /
SUPERSEDE / ADD, and the decision is applied: a superseded memory keeps its text and history and gets
`valid_to` + a successor link. Entities mentioned are upserted and linked; recognizable slots update
the user's profile facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..extraction.base import Candidate, Extractor, Message, is_multi_valued
from ..extraction.resolution import Decision, DecisionKind, ExistingMemory, decide
from ..models import MemoryKind, MemoryRecord, Scope
from ..storage.base import MemoryFilter
from ..storage.fence import fenced
from ..storage.user_lock import user_lock
from .entities import EntityMemory
from .profile import ProfileMemory
from .semantic import NewMemory, SemanticMemory

SIMILAR_LIMIT = 8
_IMPORTANCE = {
    "identity": 0.8,
    "relation": 0.7,
    "preference": 0.7,
    "request": 0.8,
    "open_item": 0.6,
    "event": 0.6,
}
_RESOLVABLE = (MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.EVENT, MemoryKind.NOTE, MemoryKind.TASK)


@dataclass(frozen=True, slots=True)
class Operation:
    """What happened to one candidate: ADD, NOOP (already known) or SUPERSEDE (replaced older memories)."""

    event: DecisionKind
    memory: MemoryRecord
    replaced_ids: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class LearnResult:
    operations: tuple[Operation, ...] = ()
    candidates: tuple[Candidate, ...] = field(default=(), repr=False)

    @property
    def memories(self) -> list[MemoryRecord]:
        return [op.memory for op in self.operations]


class LearningMemory:
    def __init__(
        self, *, semantic: SemanticMemory, entities: EntityMemory, profiles: ProfileMemory, extractor: Extractor,
    ) -> None:  # fmt: skip
        self.semantic = semantic
        self.entities = entities
        self.profiles = profiles
        self.extractor = extractor

    @fenced
    def learn(
        self, scope: Scope, messages: Sequence[Message], *, known_name: str | None = None,
        source_ids: Sequence[str] = (),
    ) -> LearnResult:  # fmt: skip
        """Extract, then resolve and write under the user's reconciliation lock (storage/user_lock.py):
        concurrent learns of one user see each other's writes and end with one current value."""
        candidates = self.extractor.extract(messages, known_name=known_name)
        with user_lock(self.semantic.store, scope.user_id):
            operations = [self._apply(scope, c, tuple(source_ids)) for c in candidates]
        return LearnResult(tuple(operations), tuple(candidates))

    def _apply(self, scope: Scope, candidate: Candidate, source_ids: tuple[str, ...]) -> Operation:
        existing = self._similar(scope, candidate)
        decision = decide(candidate, existing)
        operation = self._write(scope, candidate, decision, source_ids)
        self._link(scope, candidate, operation.memory)
        return operation

    def _similar(self, scope: Scope, candidate: Candidate) -> list[ExistingMemory]:
        user_scope = Scope(scope.user_id, agent_id=scope.agent_id)
        where = MemoryFilter(kinds=_RESOLVABLE, agent_id=scope.agent_id)
        vector = self.semantic.embedder.embed_query(candidate.content)
        rows = self.semantic.store.vector_search(user_scope.user_id, vector, where, limit=SIMILAR_LIMIT)
        similar = {row.record.id: (row.record, row.score) for row in rows}
        if candidate.attribute:
            # A one-value slot ("location") is compared whatever its value; a many-valued one ("likes")
            # only with the same value (e.g. "likes tea" vs "hates tea"), which its index finds directly.
            same = {"subject": candidate.subject, "attribute": candidate.attribute}
            if is_multi_valued(candidate.attribute) and candidate.value is not None:
                same["value"] = candidate.value
            slot = MemoryFilter(kinds=_RESOLVABLE, agent_id=scope.agent_id, metadata=same)
            for record in self.semantic.store.list_memories(scope.user_id, slot, limit=50):
                similar.setdefault(record.id, (record, 0.0))
        return [
            ExistingMemory(r.id, r.content, r.content_hash, r.kind, r.metadata, similarity=score)
            for r, score in similar.values()
        ]

    def _write(self, scope: Scope, candidate: Candidate, decision: Decision, source_ids: tuple[str, ...]) -> Operation:
        store, user = self.semantic.store, scope.user_id
        if decision.kind is DecisionKind.NOOP:
            [record] = store.get(user, [decision.target_ids[0]])
            store.record_access(user, [record.id], self.semantic.clock())
            return Operation(DecisionKind.NOOP, record, reason=decision.reason)
        item = self._new_memory(candidate, decision, source_ids)
        if decision.kind in (DecisionKind.SUPERSEDE, DecisionKind.UPDATE) and decision.target_ids:
            owner = Scope(user, agent_id=scope.agent_id)
            record = self.semantic.replace(owner, decision.target_ids, item, reason=decision.reason)
            return Operation(DecisionKind.SUPERSEDE, record, decision.target_ids, decision.reason)
        [record] = self.semantic.add_many(Scope(user, agent_id=scope.agent_id), [item])
        return Operation(DecisionKind.ADD, record, reason=decision.reason)

    @staticmethod
    def _new_memory(candidate: Candidate, decision: Decision, source_ids: tuple[str, ...]) -> NewMemory:
        metadata: dict[str, Any] = {**candidate.metadata(), "origin": "extraction"}
        if candidate.entities:
            metadata["entities"] = [e.name for e in candidate.entities]
        return NewMemory(
            content=decision.content or candidate.content,
            kind=candidate.kind,
            metadata=metadata,
            importance=_IMPORTANCE.get(candidate.category, 0.5),
            source_ids=source_ids,
        )

    def _link(self, scope: Scope, candidate: Candidate, memory: MemoryRecord) -> None:
        for mention in candidate.entities:
            self.entities.upsert(scope.user_id, mention.name, type=mention.type, memory_id=memory.id)
        if candidate.profile is not None:
            slot = candidate.profile
            self.profiles.set_fact(scope.user_id, slot.category, slot.key, slot.value, source=memory.id)
