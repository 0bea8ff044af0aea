"""Memory that learns: extraction → reconciliation → writes, entity and profile updates.

For each candidate an extractor proposes, `Reconciler` compares it with the user's similar
*current* memories and applies one decision (NOOP / SUPERSEDE / HISTORY / ADD; by rules, or by the
LLM when one is configured): a superseded memory keeps its text and history and gets `valid_to` +
a successor link. Valid time is the message's `at`, so an older statement never retires a newer
one. A user message that only retracts something ("I no longer live in Madrid") is stored as a
retraction that retires what it names. Entities mentioned are upserted and linked; recognizable
slots update the user's profile facts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..extraction.base import Candidate, Extractor, Message
from ..extraction.resolution import RETRACTION, DecisionKind
from ..extraction.statements import retracted_phrases
from ..llm.base import LLMClient
from ..models import MemoryKind, MemoryRecord, Scope
from ..storage.fence import fenced
from ..storage.user_lock import user_lock
from .entities import EntityMemory
from .profile import ProfileMemory
from .reconcile import Operation, Reconciler, retraction_metadata, user_names
from .semantic import NewMemory, SemanticMemory

_IMPORTANCE = {
    "identity": 0.8,
    "relation": 0.7,
    "preference": 0.7,
    "request": 0.8,
    "open_item": 0.6,
    "event": 0.6,
}

__all__ = ["DecisionKind", "LearnResult", "LearningMemory", "Operation"]


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
        llm: Callable[[], LLMClient | None] | None = None,
    ) -> None:  # fmt: skip
        """`llm` returns the LLM that reconciles candidates; by default the extractor's own LLM, if any."""
        self.semantic = semantic
        self.entities = entities
        self.profiles = profiles
        self.extractor = extractor
        self.reconciler = Reconciler(semantic, llm=llm or (lambda: getattr(extractor, "llm", None)))

    @fenced
    def learn(
        self, scope: Scope, messages: Sequence[Message], *, known_name: str | None = None,
        source_ids: Sequence[str] = (),
    ) -> LearnResult:  # fmt: skip
        """Extract, then resolve and write under the user's reconciliation lock (storage/user_lock.py):
        concurrent learns of one user see each other's writes and end with one current value."""
        candidates = self.extractor.extract(messages, known_name=known_name)
        with user_lock(self.semantic.store, scope.user_id):
            names = tuple(dict.fromkeys(n for n in (known_name, *user_names(self.semantic.store, scope.user_id)) if n))
            operations = []
            for candidate in candidates:
                message = _said_in(candidate, messages)
                retracted = _retractions(message)
                item = self._new_memory(candidate, tuple(source_ids), retracted)
                operation = self.reconciler.reconcile(
                    scope, candidate, item, stated_at=message.at, retracted=retracted, names=names
                )
                self._link(scope, candidate, operation.memory)
                operations.append(operation)
            for message in messages:
                if _retractions(message) and not any(_said_in(c, messages) is message for c in candidates):
                    operations.append(self._retract(scope, message, tuple(source_ids)))
        return LearnResult(tuple(operations), tuple(candidates))

    def _retract(self, scope: Scope, message: Message, source_ids: tuple[str, ...]) -> Operation:
        """A user message that says something stopped but states nothing in its place."""
        retracted = _retractions(message)
        content = f'The user said: "{" ".join(message.content.split())}"'
        statement = Candidate(MemoryKind.FACT, content, "identity", attribute=RETRACTION,
                              value="; ".join(retracted), polarity=-1)  # fmt: skip
        metadata = {**statement.metadata(), **retraction_metadata(retracted), "origin": "extraction"}
        item = NewMemory(content=content, kind=MemoryKind.FACT, metadata=metadata, importance=0.6,
                         source_ids=source_ids)  # fmt: skip
        return self.reconciler.retract(scope, statement, item, stated_at=message.at, retracted=retracted)

    @staticmethod
    def _new_memory(candidate: Candidate, source_ids: tuple[str, ...], retracted: Sequence[str]) -> NewMemory:
        metadata: dict[str, Any] = {**candidate.metadata(), "origin": "extraction"}
        if candidate.entities:
            metadata["entities"] = [e.name for e in candidate.entities]
        if retracted:
            metadata["retracts"] = list(retracted)
        return NewMemory(
            content=candidate.content,
            kind=candidate.kind,
            metadata=metadata,
            importance=_IMPORTANCE.get(candidate.category, 0.5),
            source_ids=source_ids,
        )

    def _link(self, scope: Scope, candidate: Candidate, memory: MemoryRecord) -> None:
        """Link the memory to the entities the extractor named and to every known entity it mentions;
        rebuild their summaries from their current memories."""
        named = [(m.name, m.type) for m in candidate.entities]
        self.entities.link_memory(scope.user_id, memory, named)
        if candidate.profile is not None and memory.valid_to is None:
            slot = candidate.profile
            self.profiles.set_fact(scope.user_id, slot.category, slot.key, slot.value, source=memory.id)


def _said_in(candidate: Candidate, messages: Sequence[Message]) -> Message:
    """The message a candidate comes from (its source text), else the last one."""
    source = " ".join(candidate.source_text.split()).casefold()
    if source:
        for message in messages:
            if source in " ".join(message.content.split()).casefold():
                return message
    return messages[-1]


def _retractions(message: Message) -> tuple[str, ...]:
    return retracted_phrases(message.content) if message.role == "user" else ()
