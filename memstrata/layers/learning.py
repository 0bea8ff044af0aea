"""Memory that learns: extraction → reconciliation → writes, entity and profile updates.

For each candidate an extractor proposes, `Reconciler` compares it with the user's similar
*current* memories and applies one decision (NOOP / SUPERSEDE / HISTORY / ADD; by rules, or by the
LLM when one is configured): a superseded memory keeps its text and history and gets `valid_to` +
a successor link. Valid time is the message's `at`, so an older statement never retires a newer
one. A user message that reports one of the user's open items done ("I called the dentist") closes it:
the item is retired, with history, in favour of a memory saying it is done. A user message that only
retracts something ("I no longer live in Madrid") is stored as a retraction that retires what it names.
A user sentence with an update cue that no candidate holds ("school starts at 8:30 now") is stored only
when the rules find a current memory whose value it replaces (`extraction.restatements`, `changes`).
Entities mentioned are upserted and linked; recognizable slots update the user's profile facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.retrieval import named_as_user
from ..extraction.base import (
    Candidate,
    EntityMention,
    Extraction,
    Extractor,
    ExtractorName,
    Message,
    ProfileSlot,
    extract_reported,
)
from ..extraction.completions import completion
from ..extraction.resolution import RETRACTION, DecisionKind, decide
from ..extraction.restatements import cue_sentences, held, restatement
from ..extraction.statements import retracted_phrases
from ..models import MemoryKind, MemoryRecord, Scope
from ..storage.base import MemoryFilter
from ..storage.fence import fenced
from ..storage.user_lock import user_lock
from .entities import EntityMemory
from .known_names import known_names
from .profile import ProfileMemory
from .reconcile import Operation, Reconciler, retraction_metadata, user_names
from .semantic import NewMemory, SemanticMemory

if TYPE_CHECKING:
    from .work_queue import JobProgress

_IMPORTANCE = {
    "identity": 0.8,
    "relation": 0.7,
    "preference": 0.7,
    "request": 0.8,
    "open_item": 0.6,
    "event": 0.6,
}

_OPEN_ITEMS_READ = 200
"""The most open items a message reporting something done is compared with."""

__all__ = ["DecisionKind", "LearnResult", "LearningMemory", "Operation"]


@dataclass(frozen=True, slots=True)
class LearnResult:
    """What one `learn` stored, and how: `extractor` says who found the candidates ("llm", "rules" or
    "custom"); `fallback_reason` says why the rules answered instead of the configured LLM (its
    extraction or one of its reconciliation decisions failed), None when nothing fell back."""

    operations: tuple[Operation, ...] = ()
    candidates: tuple[Candidate, ...] = field(default=(), repr=False)
    extractor: ExtractorName = "rules"
    fallback_reason: str | None = None

    @property
    def memories(self) -> list[MemoryRecord]:
        return [op.memory for op in self.operations]


class LearningMemory:
    def __init__(
        self,
        *,
        semantic: SemanticMemory,
        entities: EntityMemory,
        profiles: ProfileMemory,
        extractor: Extractor,
        reconciler: Reconciler,
    ) -> None:
        """`extractor` proposes the candidates; `reconciler` decides what each does to the stored memories."""
        self.semantic = semantic
        self.entities = entities
        self.profiles = profiles
        self.extractor = extractor
        self.reconciler = reconciler

    @fenced
    def learn(
        self,
        scope: Scope,
        messages: Sequence[Message],
        *,
        known_name: str | None = None,
        source_ids: Sequence[str] = (),
        progress: JobProgress | None = None,
    ) -> LearnResult:
        """Extract, then resolve and write under the user's reconciliation lock (storage/user_lock.py):
        concurrent learns of one user see each other's writes and end with one current value.

        With the `progress` of a queued job, the candidates are the ones the job recorded (extracted
        once), each step's memory is stored under the job's id for that step, and a step an earlier
        run applied is not applied again: a re-run of the job changes nothing."""
        extraction = Extraction((), "custom")

        def extract() -> list[Candidate]:
            nonlocal extraction
            extraction = extract_reported(self.extractor, messages, known_name=known_name)
            return list(extraction.candidates)

        if progress is None:
            candidates = extract()
        else:  # a re-run reads the recorded plan: the extractor that made it is not known then
            candidates = [candidate_of(entry) for entry in progress.planned(lambda: [plan_entry(c) for c in extract()])]
        with user_lock(self.semantic.store, scope.user_id):
            self._record_known_name(scope, known_name)
            profile_names = known_names(self.semantic.store, scope.user_id)  # one read serves both name lists
            names = tuple(dict.fromkeys(n for n in (known_name, *user_names(scope.user_id, profile_names)) if n))
            owner = tuple(dict.fromkeys(n for n in (known_name, *profile_names) if n))
            steps = [(_as_owner(candidate, owner), _said_in(candidate, messages)) for candidate in candidates]
            unread = [m for m in messages if m.role == "user" and not any(said is m for _, said in steps)]
            completions = self._completions(scope, unread, known_name) if unread else []
            retractions = [m for m in unread if _retractions(m) and not any(said is m for _, said in completions)]
            operations = []
            for index, (candidate, message) in enumerate(steps):
                step = _Step(index, progress, tuple(source_ids))
                if step.due:
                    operations.append(self._learn_one(scope, candidate, message, step, names))
                    step.done()
            for index, (candidate, message) in enumerate(completions, len(steps)):
                step = _Step(index, progress, tuple(source_ids))
                if step.due:
                    operations.append(self._learn_one(scope, candidate, message, step, names))
                    step.done()
            for index, message in enumerate(retractions, len(steps) + len(completions)):
                step = _Step(index, progress, tuple(source_ids))
                if step.due:
                    operations.append(self._retract(scope, message, step))
                    step.done()
            learned = {op.memory.id for op in operations}
            first = len(steps) + len(completions) + len(retractions)
            for index, (text, message) in enumerate(_cue_sentences(messages, candidates), first):
                step = _Step(index, progress, tuple(source_ids))
                if step.due:
                    restated = self._restatement(scope, text, message, step, names, learned, known_name)
                    operations += [restated] if restated is not None else []
                    step.done()
        fallbacks = [extraction.fallback_reason, *(op.fallback_reason for op in operations)]
        reason = next((r for r in fallbacks if r), None)
        return LearnResult(tuple(operations), tuple(candidates), extractor=extraction.extractor, fallback_reason=reason)

    def _record_known_name(self, scope: Scope, known_name: str | None) -> None:
        """Remember the caller's `known_name` as the user's profile name when none is known yet, so that later
        queries naming the user find what was learned about "the user" (`layers.known_names`). A name the user
        stated or that is already recorded is kept: the caller's guess does not overwrite it."""
        name = " ".join(known_name.split()) if isinstance(known_name, str) else ""
        if name and not known_names(self.semantic.store, scope.user_id):
            self.profiles.set_fact(scope.user_id, "identity", "name", name, source="known_name")

    def _learn_one(
        self,
        scope: Scope,
        candidate: Candidate,
        message: Message,
        step: _Step,
        names: tuple[str, ...],
        *,
        retracting: bool = True,
    ) -> Operation:
        """Reconcile one candidate and link its memory. When an earlier run of the queued job stored
        this step's memory just before a crash (its progress not marked yet), it is only linked again:
        entity links and profile facts are upserts."""
        operation = self._stored(scope, step)
        if operation is None:
            retracted = _retractions(message) if retracting else ()
            item = replace(self._new_memory(candidate, step.source_ids, retracted), record_id=step.record_id)
            operation = self.reconciler.reconcile(
                scope, candidate, item, stated_at=message.at, retracted=retracted, names=names
            )
        self._link(scope, candidate, operation.memory)
        return operation

    def _restatement(
        self,
        scope: Scope,
        text: str,
        message: Message,
        step: _Step,
        names: tuple[str, ...],
        learned: set[str],
        known_name: str | None,
    ) -> Operation | None:
        """A sentence with an update cue that the extractor did not keep, stored when the rules find a current
        memory (not one this learn wrote) whose value it replaces (`extraction.restatements`); else None."""
        stored = self._stored(scope, step)
        if stored is not None:
            return stored
        candidate = restatement(text, message, name=known_name)
        if candidate is None:
            return None
        at = min(message.at, self.semantic.clock())
        existing = self.reconciler.similar(scope, candidate, names=names, stated_at=at)
        decision = decide(candidate, existing, stated_at=at)
        replaces = decision.kind is DecisionKind.SUPERSEDE and not decision.reason.startswith("same ")
        tasks = {m.id for m in existing if m.kind is MemoryKind.TASK}  # done reports close those (`_completions`)
        if not replaces or set(decision.target_ids) & (learned | tasks):
            return None
        return self._learn_one(scope, candidate, message, step, names, retracting=False)  # as decided above

    def _completions(
        self, scope: Scope, messages: Sequence[Message], known_name: str | None
    ) -> list[tuple[Candidate, Message]]:
        """For user messages nothing else was read from that report one of the user's open items done
        ("I called the dentist"), the memory that closes it (`completions.completion`)."""
        where = MemoryFilter(
            kinds=(MemoryKind.TASK,), agent_id=scope.agent_id, metadata={"subject": "user", "attribute": "task"}
        )
        tasks = self.semantic.store.list_memories(scope.user_id, where, limit=_OPEN_ITEMS_READ)
        items = [str(r.metadata.get("value") or r.content) for r in tasks]
        found = [(completion(m, items, name=known_name), m) for m in messages] if items else []
        return [(candidate, message) for candidate, message in found if candidate is not None]

    def _stored(self, scope: Scope, step: _Step) -> Operation | None:
        """The step's memory, when an earlier run of its queued job stored it."""
        found = self.semantic.store.get(scope.user_id, [step.record_id]) if step.record_id else []
        return Operation(DecisionKind.NOOP, found[0], (), "stored by an earlier run of the job") if found else None

    def _retract(self, scope: Scope, message: Message, step: _Step) -> Operation:
        """A user message that says something stopped but states nothing in its place."""
        stored = self._stored(scope, step)
        if stored is not None:
            return stored
        retracted = _retractions(message)
        content = f'The user said: "{" ".join(message.content.split())}"'
        statement = Candidate(
            MemoryKind.FACT, content, "identity", attribute=RETRACTION, value="; ".join(retracted), polarity=-1
        )
        metadata = {**statement.metadata(), **retraction_metadata(retracted), "origin": "extraction"}
        item = NewMemory(
            content=content,
            kind=MemoryKind.FACT,
            metadata=metadata,
            importance=0.6,
            source_ids=step.source_ids,
            record_id=step.record_id,
        )
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


@dataclass(frozen=True, slots=True)
class _Step:
    """One write of a learn: a candidate, or a message that only retracts."""

    index: int
    progress: JobProgress | None
    source_ids: tuple[str, ...]

    @property
    def record_id(self) -> str | None:
        """The id its memory is stored under: derived from the queued job, else a new one."""
        return self.progress.step_id(self.index) if self.progress is not None else None

    @property
    def due(self) -> bool:
        """False when an earlier run of the queued job applied this step."""
        return self.progress is None or not self.progress.applied(self.index)

    def done(self) -> None:
        if self.progress is not None:
            self.progress.mark_applied(self.index)


def plan_entry(candidate: Candidate) -> dict[str, Any]:
    """A candidate as JSON, as a queued job records its plan."""
    entry = asdict(candidate)
    entry["kind"] = candidate.kind.value
    entry["event_time"] = candidate.event_time.isoformat() if candidate.event_time is not None else None
    return entry


def candidate_of(entry: dict[str, Any]) -> Candidate:
    """The candidate a plan entry (`plan_entry`) records."""
    event_time = entry.get("event_time")
    profile = entry.get("profile")
    return Candidate(
        **{
            **entry,
            "kind": MemoryKind(entry["kind"]),
            "event_time": datetime.fromisoformat(event_time) if event_time else None,
            "entities": tuple(EntityMention(**mention) for mention in entry.get("entities") or ()),
            "profile": ProfileSlot(**profile) if profile else None,
        }
    )


def _said_in(candidate: Candidate, messages: Sequence[Message]) -> Message:
    """The message a candidate comes from (its source text), else the last one."""
    source = " ".join(candidate.source_text.split()).casefold()
    if source:
        for message in messages:
            if source in " ".join(message.content.split()).casefold():
                return message
    return messages[-1]


def _cue_sentences(messages: Sequence[Message], candidates: Sequence[Candidate]) -> list[tuple[str, Message]]:
    """The user's sentences with an update cue that no candidate holds whole, with their messages."""
    return [(text, message) for message in messages for text in cue_sentences(message) if not held(text, candidates)]


def _retractions(message: Message) -> tuple[str, ...]:
    return retracted_phrases(message.content) if message.role == "user" else ()


def _as_owner(candidate: Candidate, owner: tuple[str, ...]) -> Candidate:
    """`candidate` with the user's own known names read as "the user" (its text and its subject), so that a
    fact the extractor wrote with the user's name ("Maya lives in Porto.") is stored, found and reconciled
    like every other fact about the user."""
    if not owner:
        return candidate
    content = named_as_user(candidate.content, owner)
    about_owner = candidate.subject.casefold() in {n.casefold() for n in owner}
    if content == candidate.content and not about_owner:
        return candidate
    if not about_owner:
        return replace(candidate, content=content)
    category = "identity" if candidate.category == "entity" else candidate.category  # about the user, not another
    return replace(candidate, content=content, subject="user", category=category)
