"""Decide what a new candidate memory does to the user's current memories (pure, no I/O).

`decide` compares a `Candidate` with similar current memories and returns one `Decision`:

- NOOP: the candidate is already known (same text, same subject+attribute+value, or a near
  duplicate of the same kind and attribute); `target_ids` holds the memory to refresh.
- SUPERSEDE: same subject and single-valued attribute with a new value ("lives in Paris" ->
  "lives in Berlin"), or the same object with the opposite polarity ("likes tea" -> "hates tea");
  `target_ids` are the memories to retire.
- ADD: anything else.

The rule that matters most: an unrelated fact never retires another. Multi-valued attributes
("likes", "habit", "event", ...) never supersede a different value, and a memory without
structured metadata is never superseded by the rules (only a duplicate of it can be detected).

`validate_llm_decision` turns an LLM's proposal (ADD / UPDATE / SUPERSEDE / NOOP with indices into
the `existing` list) into a safe `Decision`: bad indices fall back to ADD, and a proposal to
retire or rewrite an unrelated memory is refused (ADD instead).

Stored metadata keys read here: "subject", "attribute", "value", "polarity", "event_time".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..models import MemoryKind, content_hash
from .base import Candidate, is_multi_valued

DUPLICATE_SIMILARITY = 0.95
"""Cosine similarity from which a same-kind, same-attribute memory counts as the same memory."""

RELATED_SIMILARITY = 0.6
"""Least similarity for an LLM to retire or rewrite a memory that carries no structured slot."""

_FREE_TEXT_ATTRIBUTES = frozenset({None, "event", "note", "task", "plan"})
"""Attributes whose value is the source sentence rather than a comparable slot value."""

_STRUCTURED_KINDS = frozenset(
    {MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.EVENT, MemoryKind.NOTE, MemoryKind.TASK}
)


class DecisionKind(StrEnum):
    ADD = "add"
    NOOP = "noop"
    SUPERSEDE = "supersede"
    UPDATE = "update"


@dataclass(frozen=True, slots=True)
class ExistingMemory:
    """A current memory similar to the candidate, as resolution needs to see it."""

    id: str
    content: str
    content_hash: str
    kind: MemoryKind
    metadata: Mapping[str, Any] = field(default_factory=dict)
    similarity: float = 0.0


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a candidate.

    `target_ids` are the memories to refresh (NOOP), retire (SUPERSEDE) or rewrite (UPDATE, with `content`).
    """

    kind: DecisionKind
    target_ids: tuple[str, ...] = ()
    reason: str = ""
    content: str | None = None


@dataclass(frozen=True, slots=True)
class _Slot:
    subject: str
    attribute: str | None
    value: str | None
    polarity: int
    event_time: str | None


def normalize_value(value: object) -> str | None:
    """Comparable form of a slot value: case, accents' composition, articles, punctuation folded."""
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    text = re.sub(r"[^\w\s@.+-]", " ", text)
    text = re.sub(r"^(?:the|a|an)\s+", "", text.strip())
    return " ".join(text.split()).strip(" .") or None


def _subject(value: object) -> str:
    text = normalize_value(value)
    return text or "user"


def _polarity(value: object) -> int:
    try:
        return -1 if int(str(value)) < 0 else 1
    except ValueError:
        return 1


def _slot_of_candidate(candidate: Candidate) -> _Slot:
    return _Slot(
        subject=_subject(candidate.subject),
        attribute=candidate.attribute,
        value=normalize_value(candidate.value),
        polarity=candidate.polarity,
        event_time=candidate.event_time.isoformat() if candidate.event_time else None,
    )


def _slot_of_memory(memory: ExistingMemory) -> _Slot:
    meta = memory.metadata or {}
    attribute = meta.get("attribute")
    return _Slot(
        subject=_subject(meta.get("subject")),
        attribute=str(attribute) if attribute else None,
        value=normalize_value(meta.get("value")),
        polarity=_polarity(meta.get("polarity", 1)),
        event_time=str(meta["event_time"]) if meta.get("event_time") else None,
    )


def _same_slot(a: _Slot, b: _Slot) -> bool:
    return a.attribute is not None and a.attribute == b.attribute and a.subject == b.subject


def decide(
    candidate: Candidate,
    existing: Sequence[ExistingMemory],
    *,
    duplicate_similarity: float = DUPLICATE_SIMILARITY,
) -> Decision:
    """NOOP, SUPERSEDE or ADD for `candidate` given the user's similar current memories."""
    new_hash = content_hash(candidate.content)
    for memory in existing:
        if memory.content_hash == new_hash:
            return Decision(DecisionKind.NOOP, (memory.id,), "same text as an existing memory")
    new = _slot_of_candidate(candidate)
    multi = is_multi_valued(new.attribute)
    retire: list[str] = []
    for memory in existing:
        if memory.kind not in _STRUCTURED_KINDS or new.attribute in _FREE_TEXT_ATTRIBUTES:
            continue  # an event's or note's "value" is its sentence, not a comparable slot value
        old = _slot_of_memory(memory)
        if not _same_slot(new, old) or new.value is None or old.value is None:
            continue
        if new.value == old.value:
            if new.polarity == old.polarity:
                return Decision(DecisionKind.NOOP, (memory.id,), f"same {new.attribute} already stored")
            retire.append(memory.id)  # same object, opposite polarity ("likes tea" -> "hates tea")
        elif not multi:
            retire.append(memory.id)  # one slot, new value ("lives in Paris" -> "lives in Berlin")
    if retire:
        return Decision(DecisionKind.SUPERSEDE, tuple(retire), f"new value for {new.subject}'s {new.attribute}")
    for memory in sorted(existing, key=lambda m: m.similarity, reverse=True):
        if memory.similarity < duplicate_similarity:
            break
        if memory.kind == candidate.kind and _near_duplicate(new, _slot_of_memory(memory)):
            return Decision(DecisionKind.NOOP, (memory.id,), f"near duplicate (similarity {memory.similarity:.2f})")
    return Decision(DecisionKind.ADD, (), "new information")


def _near_duplicate(new: _Slot, old: _Slot) -> bool:
    """Very similar text counts as a duplicate only if nothing structured says they differ."""
    if new.attribute != old.attribute or new.subject != old.subject or new.polarity != old.polarity:
        return False
    if new.event_time and old.event_time and new.event_time[:10] != old.event_time[:10]:
        return False
    if new.attribute in _FREE_TEXT_ATTRIBUTES:
        return True  # the value is the sentence itself: rewording is not a new fact
    return new.value is None or old.value is None or new.value == old.value


# --- LLM proposals ----------------------------------------------------------------------------

_ACTIONS = {
    "add": DecisionKind.ADD,
    "new": DecisionKind.ADD,
    "noop": DecisionKind.NOOP,
    "none": DecisionKind.NOOP,
    "no_op": DecisionKind.NOOP,
    "skip": DecisionKind.NOOP,
    "duplicate": DecisionKind.NOOP,
    "update": DecisionKind.UPDATE,
    "merge": DecisionKind.UPDATE,
    "supersede": DecisionKind.SUPERSEDE,
    "replace": DecisionKind.SUPERSEDE,
    "contradict": DecisionKind.SUPERSEDE,
}


def _indices(value: object) -> list[int] | None:
    """Integer indices from an int, a digit string or a list of them; None when any is unusable."""
    items = value if isinstance(value, list | tuple) else [value]
    found = []
    for item in items:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            found.append(item)
        elif isinstance(item, str) and item.strip().isdigit():
            found.append(int(item.strip()))
        else:
            return None
    return found or None


def _related(candidate: Candidate, memory: ExistingMemory, *, related_similarity: float) -> bool:
    """May `candidate` retire or rewrite `memory`? Same slot, or (no slot on either side) similar text."""
    new, old = _slot_of_candidate(candidate), _slot_of_memory(memory)
    if new.attribute is not None and old.attribute is not None:
        if not _same_slot(new, old):
            return False
        if new.attribute in _FREE_TEXT_ATTRIBUTES:
            return memory.similarity >= related_similarity  # e.g. a rescheduled event
        if is_multi_valued(new.attribute):
            return new.value is not None and new.value == old.value
        return True
    return memory.similarity >= related_similarity


def validate_llm_decision(
    proposal: Mapping[str, Any],
    candidate: Candidate,
    existing: Sequence[ExistingMemory],
    *,
    related_similarity: float = RELATED_SIMILARITY,
) -> Decision:
    """A safe `Decision` from an LLM proposal such as {"action": "SUPERSEDE", "index": 2}.

    Accepted keys: "action" (or "event"/"decision"), "index"/"indices"/"target" (position(s) in
    `existing`), "content" (new text for UPDATE). Anything malformed, out of range, or aimed at an
    unrelated memory becomes ADD, with the reason saying why.
    """
    raw_action = next((proposal[k] for k in ("action", "event", "decision") if k in proposal), None)
    kind = _ACTIONS.get(str(raw_action).strip().casefold()) if raw_action is not None else None
    if kind is None:
        return Decision(DecisionKind.ADD, (), f"unknown action {raw_action!r}; added instead")
    if kind is DecisionKind.ADD:
        return Decision(DecisionKind.ADD, (), "the model proposed a new memory")
    raw_index = next((proposal[k] for k in ("index", "indices", "target", "targets", "id") if k in proposal), None)
    indices = _indices(raw_index)
    if indices is None or any(not 0 <= i < len(existing) for i in indices):
        return Decision(
            DecisionKind.ADD, (), f"{kind.value} names no valid memory index ({raw_index!r}); added instead"
        )
    targets = [existing[i] for i in dict.fromkeys(indices)]
    ids = tuple(memory.id for memory in targets)
    if kind is DecisionKind.NOOP:
        return Decision(DecisionKind.NOOP, ids[:1], "the model found it already stored")
    unrelated = [m.id for m in targets if not _related(candidate, m, related_similarity=related_similarity)]
    if unrelated:
        return Decision(DecisionKind.ADD, (), f"refused to {kind.value} unrelated memories {unrelated}; added instead")
    if kind is DecisionKind.UPDATE:
        content = proposal.get("content") or proposal.get("text") or candidate.content
        if not isinstance(content, str) or not content.strip():
            content = candidate.content
        return Decision(DecisionKind.UPDATE, ids[:1], "the model merged it into an existing memory", content.strip())
    return Decision(DecisionKind.SUPERSEDE, ids, "the model found it replaces an existing memory")


__all__ = [
    "DUPLICATE_SIMILARITY",
    "RELATED_SIMILARITY",
    "Decision",
    "DecisionKind",
    "ExistingMemory",
    "decide",
    "normalize_value",
    "validate_llm_decision",
]
