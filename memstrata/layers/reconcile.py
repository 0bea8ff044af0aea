"""Reconciliation: every new memory is compared with the user's similar current memories.

For one candidate of `learn()` (`layers.learning`, which owns the reconciler), `Reconciler`
gathers the similar current memories (vector neighbours, the same subject/attribute slot, and
memories naming a phrase the message retracts), decides what the candidate does to them and
applies it, keeping history:

- offline, `extraction.resolution.decide` (slots, polarity, retractions such as "no longer" or
  "used to", and valid time: an older statement never retires a newer one);
- with an LLM, one structured decision per candidate through `prompts.resolve`, checked by
  `resolution.validate_llm_decision` (an unrelated memory is never retired); the rules decide when
  the LLM fails or answers nothing usable.

Valid time is when the user said it (`stated_at`, a message's `at`); recorded time is the store's
clock. A memory retired by a newer statement gets `valid_to` = the time that statement was made.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import LLMOutputError, ProviderError
from ..extraction.base import Candidate, Extractor, Message, is_multi_valued
from ..extraction.changes import value_topic
from ..extraction.resolution import (
    RETRACTION,
    Decision,
    DecisionKind,
    ExistingMemory,
    decide,
    history_of,
    retired_by_retraction,
    validate_llm_decision,
)
from ..extraction.statements import first_person
from ..llm.base import LLMClient
from ..llm.whole import complete_whole
from ..models import MemoryKind, MemoryRecord, Scope, content_hash
from ..prompts.resolve import build_resolution_messages, parse_resolution
from ..storage.base import MemoryFilter

if TYPE_CHECKING:
    from .semantic import NewMemory, SemanticMemory

log = logging.getLogger(__name__)

SIMILAR_LIMIT = 8
RESOLVABLE = (
    MemoryKind.FACT,
    MemoryKind.PREFERENCE,
    MemoryKind.PROCEDURE,
    MemoryKind.EVENT,
    MemoryKind.NOTE,
    MemoryKind.TASK,
)
"""Kinds a new memory is reconciled with; PROCEDURE because learned standing instructions are procedures."""
LLMSource = Callable[[], "LLMClient | None"]
_SLOT_CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Operation:
    """What happened to one candidate: ADD, NOOP (already known), SUPERSEDE (replaced older
    memories) or HISTORY (stored as already superseded by a memory said later)."""

    event: DecisionKind
    memory: MemoryRecord
    replaced_ids: tuple[str, ...] = ()
    reason: str = ""
    fallback_reason: str | None = None
    """Why the rules decided instead of the configured LLM (it failed or answered nothing usable)."""


class Reconciler:
    """Decides and applies what a new memory does to the user's current ones (see module doc)."""

    def __init__(self, semantic: SemanticMemory, *, reader: Extractor, llm: LLMSource | None = None):
        """`reader`: the extractor that reads a slot out of a memory stored as plain text; `llm` returns
        the LLM that decides (None: the rules decide)."""
        self.semantic = semantic
        self.reader = reader
        self.llm = llm or (lambda: None)
        self._slots: dict[str, dict[str, Any]] = {}

    # -- one candidate -----------------------------------------------------------------------------
    def reconcile(
        self,
        scope: Scope,
        candidate: Candidate,
        item: NewMemory,
        *,
        stated_at: datetime,
        retracted: Sequence[str] = (),
        names: Iterable[str] = (),
    ) -> Operation:
        """Compare `candidate` (stored as `item`) with similar current memories and apply the decision."""
        stated_at = min(stated_at, self.semantic.clock())  # a message dated ahead of the store is valid from now
        existing = self.similar(scope, candidate, retracted=retracted, names=names, stated_at=stated_at)
        decision, fallback = self.decide(candidate, existing, retracted=retracted, stated_at=stated_at)
        operation = self.apply(scope, decision, replace(item, valid_from=stated_at), existing)
        return replace(operation, fallback_reason=fallback)

    def decide(
        self,
        candidate: Candidate,
        existing: Sequence[ExistingMemory],
        *,
        retracted: Sequence[str] = (),
        stated_at: datetime | None = None,
    ) -> tuple[Decision, str | None]:
        """The LLM's checked decision when an LLM is configured and answers usably, else the rules'; with
        why the rules decided instead of a configured LLM (None when the LLM decided or was not asked)."""
        rules = decide(candidate, existing, retracted=retracted, stated_at=stated_at)
        llm = self.llm()
        existing = [m for m in existing if m.current]  # the model sees only what holds now
        if llm is None or not existing or rules.kind is DecisionKind.HISTORY:
            return rules, None
        try:
            proposed = self._ask(llm, candidate, existing, stated_at, retracted)
        except (ProviderError, LLMOutputError) as exc:
            log.warning("LLM reconciliation failed, deciding by rules: %s", exc)
            return rules, f"LLM reconciliation failed: {exc}"
        if proposed.kind is DecisionKind.ADD and retracted:
            # the message itself says these stopped holding ("I no longer work at Acme"): retired whatever the model saw
            named = [m for m in existing if m.id in set(retired_by_retraction(existing, retracted))]
            if named:
                proposed = Decision(DecisionKind.SUPERSEDE, tuple(m.id for m in named), "the message retracts them")
        return _not_against_later(proposed, existing, stated_at), None

    def _ask(
        self,
        llm: LLMClient,
        candidate: Candidate,
        existing: Sequence[ExistingMemory],
        stated_at: datetime | None,
        retracted: Sequence[str],
    ) -> Decision:
        today = (stated_at or self.semantic.clock()).date()
        prompt = build_resolution_messages([candidate.content], [m.content for m in existing], today=today)
        response = complete_whole(llm, prompt, max_tokens=512, json_mode=True)
        [raw] = parse_resolution(response.text, new_count=1, existing_count=len(existing))
        proposal = {"action": raw.action, "index": raw.target, "content": raw.content}
        return validate_llm_decision(proposal, candidate, existing, retracted=retracted)

    # -- gathering -----------------------------------------------------------------------------------
    def similar(
        self,
        scope: Scope,
        candidate: Candidate,
        *,
        retracted: Sequence[str] = (),
        names: Iterable[str] = (),
        stated_at: datetime | None = None,
    ) -> list[ExistingMemory]:
        """The user's current memories that `candidate` may duplicate or contradict."""
        store, user = self.semantic.store, scope.user_id
        where = self._current(scope, stated_at)
        vector = self.semantic.embedder.embed_query(candidate.content)
        found = {
            r.record.id: (r.record, r.score) for r in store.vector_search(user, vector, where, limit=SIMILAR_LIMIT)
        }
        for phrase in retracted:
            for row in store.keyword_search(user, phrase, where, limit=SIMILAR_LIMIT):
                found.setdefault(row.record.id, (row.record, 0.0))
        topic = value_topic(candidate.value)
        for row in store.keyword_search(user, topic, where, limit=SIMILAR_LIMIT) if topic else ():
            # a stated value's topic ("consistent gym" for "... gym routine - four times a week") finds the older
            # value it may replace, which the vector neighbours miss among many; open items are left to them
            if row.record.kind is not MemoryKind.TASK:
                found.setdefault(row.record.id, (row.record, 0.0))
        if candidate.attribute:
            # A one-value slot ("location") is compared whatever its value; a many-valued one ("likes")
            # only with the same value (e.g. "likes tea" vs "hates tea"), which its index finds directly.
            same: dict[str, Any] = {"subject": candidate.subject, "attribute": candidate.attribute}
            if is_multi_valued(candidate.attribute) and candidate.value is not None:
                same["value"] = candidate.value
            for record in store.list_memories(user, replace(where, metadata=same), limit=50):
                found.setdefault(record.id, (record, 0.0))
        known = tuple(names)
        past = self._replaced(scope, candidate, retracted, stated_at, exclude=found.keys())
        return [self.existing(r, s, known) for r, s in found.values() if r.valid_to is None] + [
            replace(self.existing(r, 0.0, known), current=False) for r in past
        ]

    def _replaced(
        self,
        scope: Scope,
        candidate: Candidate,
        retracted: Sequence[str],
        stated_at: datetime | None,
        *,
        exclude: Iterable[str],
    ) -> list[MemoryRecord]:
        """Superseded memories of the candidate's slot (or named by its retractions) said after it:
        a statement older than a memory already replaced is history, never current."""
        if stated_at is None:
            return []
        store, user, skip = self.semantic.store, scope.user_id, set(exclude)
        where = replace(self._current(scope, stated_at), include_superseded=True)
        rows: list[MemoryRecord] = []
        if candidate.attribute:
            slot = {"subject": candidate.subject, "attribute": candidate.attribute}
            rows += store.list_memories(user, replace(where, metadata=slot), limit=50)
        for phrase in retracted:
            rows += [row.record for row in store.keyword_search(user, phrase, where, limit=SIMILAR_LIMIT)]
        said_later = (r for r in rows if r.valid_to is not None and (stated_at_of(r) or stated_at) > stated_at)
        return list({r.id: r for r in said_later if r.id not in skip}.values())

    def _current(self, scope: Scope, stated_at: datetime | None) -> MemoryFilter:
        """Memories not superseded, including ones said after `stated_at` or dated after the clock."""
        at = max(self.semantic.clock(), stated_at) if stated_at is not None else self.semantic.clock()
        return MemoryFilter(kinds=RESOLVABLE, agent_id=scope.agent_id, as_of=at)

    def existing(self, record: MemoryRecord, similarity: float, names: Sequence[str] = ()) -> ExistingMemory:
        """`record` as resolution sees it; a memory stored as plain text gets the slot its text states."""
        metadata = record.metadata if "attribute" in record.metadata else self._read_slot(record, names)
        return ExistingMemory(
            record.id,
            record.content,
            record.content_hash,
            record.kind,
            metadata,
            similarity=similarity,
            stated_at=stated_at_of(record),
        )

    def _read_slot(self, record: MemoryRecord, names: Sequence[str]) -> dict[str, Any]:
        key = f"{record.content_hash}:{','.join(names)}"
        if key not in self._slots:
            if len(self._slots) >= _SLOT_CACHE_SIZE:
                self._slots.clear()
            candidate = self.read_candidate(record.content, record.kind, names, at=record.created_at)
            self._slots[key] = candidate.metadata() if candidate is not None else {}
        return {**record.metadata, **self._slots[key]}

    def read_candidate(self, text: str, kind: MemoryKind, names: Iterable[str], *, at: datetime) -> Candidate | None:
        """The slot a plain-text memory states ("Alice works at Acme Corp" -> employer Acme Corp), if any."""
        said = first_person(text, names) or text
        for candidate in self.reader.extract([Message("user", said, at)]):
            if candidate.attribute is not None and candidate.attribute not in ("event", "note", "task", "plan"):
                return replace(candidate, content=text, kind=kind)
        return None

    # -- applying ------------------------------------------------------------------------------------
    def apply(
        self, scope: Scope, decision: Decision, item: NewMemory, existing: Sequence[ExistingMemory] = ()
    ) -> Operation:
        semantic, owner = self.semantic, Scope(scope.user_id, agent_id=scope.agent_id)
        if decision.kind is DecisionKind.NOOP:
            return Operation(DecisionKind.NOOP, self._refresh(scope, decision.target_ids[0], item), (), decision.reason)
        if decision.kind is DecisionKind.HISTORY:
            record = semantic.add_history(owner, item, successor_id=decision.target_ids[0], retire=decision.retire_ids)
            return Operation(DecisionKind.HISTORY, record, decision.retire_ids, decision.reason)
        if decision.kind in (DecisionKind.SUPERSEDE, DecisionKind.UPDATE) and decision.target_ids:
            if decision.content:
                item = replace(item, content=decision.content)
            record = semantic.replace(owner, decision.target_ids, item, reason=decision.reason)
            return Operation(DecisionKind.SUPERSEDE, record, decision.target_ids, decision.reason)
        [record] = semantic.add_many(owner, [item])
        return Operation(DecisionKind.ADD, record, (), decision.reason)

    def _refresh(self, scope: Scope, memory_id: str, item: NewMemory) -> MemoryRecord:
        """A restated memory: its access is recorded, and a later valid time kept as `stated_at`."""
        store, now = self.semantic.store, self.semantic.clock()
        [record] = store.get(scope.user_id, [memory_id])
        said = item.valid_from
        if said is not None and (stated_at_of(record) or said) < said:
            record = replace(record, metadata={**record.metadata, "stated_at": said.isoformat()})
            store.save(scope.user_id, [record])
        store.record_access(scope.user_id, [record.id], now)
        return record

    def retract(
        self, scope: Scope, statement: Candidate, item: NewMemory, *, stated_at: datetime, retracted: Sequence[str]
    ) -> Operation:
        """A statement that only says something stopped ("I no longer live in Madrid"): stored as a
        retraction memory that retires the current memories it names, or as history of one said later."""
        stated_at = min(stated_at, self.semantic.clock())
        existing = self.similar(scope, statement, retracted=retracted, stated_at=stated_at)
        said_again = next((m for m in existing if m.current and m.content_hash == content_hash(item.content)), None)
        if said_again is not None:
            decision = Decision(DecisionKind.NOOP, (said_again.id,), "the same retraction again")
            return self.apply(scope, decision, replace(item, valid_from=stated_at))
        named = [m for m in existing if m.id in set(retired_by_retraction(existing, retracted))]
        later = [m for m in named if m.stated_at is not None and m.stated_at > stated_at]
        older = [m for m in named if m.current and m not in later]
        metadata = {**(item.metadata or {}), **retraction_metadata(retracted), "retracts": list(retracted)}
        item = replace(item, metadata=metadata, valid_from=stated_at)
        if later:
            decision = history_of(later, older, "said before what it retracts")
        elif older:
            decision = Decision(DecisionKind.SUPERSEDE, tuple(m.id for m in older), "the user says it stopped")
        else:
            decision = Decision(DecisionKind.ADD, (), "records what stopped holding")
        return self.apply(scope, decision, item)


def user_names(user_id: str, profile_names: Sequence[str]) -> tuple[str, ...]:
    """Names a memory may call the user by: the user id (without a tenant prefix) and the current profile
    name (the first of `layers.known_names.known_names`)."""
    names = [user_id, user_id.rpartition(":")[2], *profile_names[:1]]
    return tuple(dict.fromkeys(n for n in names if n))


def stated_at_of(record: MemoryRecord) -> datetime | None:
    """When the user last said `record`: its `stated_at` metadata if later, else its valid time."""
    said = record.metadata.get("stated_at")
    start = record.valid_from or record.created_at
    if isinstance(said, str):
        try:
            later = datetime.fromisoformat(said)
        except ValueError:
            return start
        return max(start, later) if later.tzinfo is not None else start
    return start


def _not_against_later(decision: Decision, existing: Sequence[ExistingMemory], stated_at: datetime | None) -> Decision:
    """An LLM's SUPERSEDE/UPDATE of a memory said after the candidate becomes HISTORY instead."""
    if decision.kind not in (DecisionKind.SUPERSEDE, DecisionKind.UPDATE) or stated_at is None:
        return decision
    by_id = {m.id: m for m in existing}
    targets = [by_id[i] for i in decision.target_ids]
    later = [m for m in targets if (m.stated_at or stated_at) > stated_at]
    if later:
        older = [m for m in targets if m not in later]
        return history_of(later, older, "said before the memory the model would replace")
    return decision


def retraction_metadata(phrases: Sequence[str]) -> dict[str, Any]:
    """Slot metadata of a memory that records a retraction."""
    return {
        "subject": "user",
        "attribute": RETRACTION,
        "value": "; ".join(phrases),
        "polarity": -1,
        "retracts": list(phrases),
    }


__all__ = ["Operation", "Reconciler", "retraction_metadata", "stated_at_of", "user_names"]
