"""Decide what a new candidate memory does to the user's current memories (pure, no I/O).

`decide` compares a `Candidate` with similar current memories and returns one `Decision`:

- NOOP: the candidate is already known (same text, same subject+attribute+value, or a near
  duplicate of the same kind and attribute); `target_ids` holds the memory to refresh.
- SUPERSEDE: same subject and single-valued attribute with a new value ("lives in Paris" ->
  "lives in Berlin"), the same object with the opposite polarity ("likes tea" -> "hates tea"), or the
  same value said again later in other words (the later wording becomes current), or a statement
  that a switch replaces ("switched from Spotify to Tidal", "switched to almond milk": `switches`),
  a value of the same subject and attribute said again with an update cue ("we moved the launch to
  May" retires "the launch is on April 10"; "I've been wearing my Garmin for 9 months now" retires "... for
  6 months": `changes`), or an open item the candidate reports done
  ("I called the dentist" closes "call the dentist": `completions`); `target_ids` are the memories to retire.
- ADD: anything else.

The rule that matters most: an unrelated fact never retires another. Multi-valued attributes
("likes", "habit", "event", ...) never supersede a different value, and a memory without
structured metadata is never superseded by the rules (only a duplicate of it can be detected).

`validate_llm_decision` turns an LLM's proposal (ADD / UPDATE / SUPERSEDE / NOOP with indices into
the `existing` list) into a safe `Decision`: bad indices fall back to ADD, and a proposal to
retire or rewrite an unrelated memory is refused (ADD instead). Related means: the same slot, a
contradiction the rules read, a topic both are about (a food group: "I'm vegetarian" and "loves
steak"), or, without a slot on either side, similar text.

Stored metadata keys read here: "subject", "attribute", "value", "polarity", "event_time".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from ..models import MemoryKind, content_hash
from . import diet
from .base import STATEMENT, Candidate, is_multi_valued
from .changes import change_retires, restated_value
from .completions import closed_items, closes
from .switches import switch_retires

DUPLICATE_SIMILARITY = 0.95
"""Cosine similarity from which a same-kind, same-attribute memory counts as the same memory."""

RELATED_SIMILARITY = 0.6
"""Least similarity for an LLM to retire or rewrite a memory that carries no structured slot."""

RETRACTION = "retraction"
"""Attribute of a memory that records that something stopped holding ("I no longer live in Madrid")
when the message stated nothing in its place; its metadata "retracts" lists the phrases."""

_FREE_TEXT_ATTRIBUTES = frozenset({None, "event", "note", "task", "plan", RETRACTION, STATEMENT})
"""Attributes whose value is the source sentence rather than a comparable slot value."""

_STRUCTURED_KINDS = frozenset(
    {MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.EVENT, MemoryKind.NOTE, MemoryKind.TASK}
)


class DecisionKind(StrEnum):
    ADD = "add"
    NOOP = "noop"
    SUPERSEDE = "supersede"
    UPDATE = "update"
    HISTORY = "history"
    """The candidate is older than the memory that contradicts it: stored as already superseded by it."""


@dataclass(frozen=True, slots=True)
class ExistingMemory:
    """A current memory similar to the candidate, as resolution needs to see it."""

    id: str
    content: str
    content_hash: str
    kind: MemoryKind
    metadata: Mapping[str, Any] = field(default_factory=dict)
    similarity: float = 0.0
    stated_at: datetime | None = None
    """When the user last said it (valid time): its `valid_from`, or later if repeated since."""
    current: bool = True
    """False for a superseded memory: it can only show that the candidate was said before it."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a candidate.

    `target_ids` are the memories to refresh (NOOP), retire (SUPERSEDE), rewrite (UPDATE, with
    `content`) or, for HISTORY, the newer memory the candidate is stored as superseded by.
    """

    kind: DecisionKind
    target_ids: tuple[str, ...] = ()
    reason: str = ""
    content: str | None = None
    retire_ids: tuple[str, ...] = ()
    """For HISTORY: older memories the candidate still retires (it replaced them before being replaced)."""


@dataclass(frozen=True, slots=True)
class _Slot:
    subject: str
    attribute: str | None
    value: str | None
    polarity: int
    event_time: str | None
    said: str | None = None
    """The candidate's sentence as said (a trailing "now" kept), for the update cues `changes` reads."""


_TIME_ADVERB = re.compile(r"(?:\s+(?:now|anymore|any more|these days|nowadays|lately|again|too|as well))+$")
"""Words that date a statement ("I hate coffee now") but are not part of the value it names."""


def normalize_value(value: object) -> str | None:
    """Comparable form of a slot value: case, accents' composition, articles, punctuation and a
    trailing time adverb ("coffee now", "tea anymore") folded."""
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    text = re.sub(r"[^\w\s@.+-]", " ", text)
    text = re.sub(r"^(?:the|a|an)\s+", "", text.strip())
    text = _TIME_ADVERB.sub("", " ".join(text.split()))
    return text.strip(" .") or None


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
        said=" ".join((candidate.source_text or candidate.content).split()) or None,
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
    retracted: Sequence[str] = (),
    stated_at: datetime | None = None,
) -> Decision:
    """NOOP, SUPERSEDE, HISTORY or ADD for `candidate` given the user's similar current memories.

    `retracted` are phrases the message says no longer hold ("no longer work at Acme" -> "work at
    acme", see `statements.retracted_phrases`): a memory of the same subject whose slot value they
    name is retired too, whatever its attribute. `stated_at` is when the candidate was said: a
    contradicting memory said later is never retired; the candidate becomes its history (HISTORY).
    """
    new_hash = content_hash(candidate.content)
    past = [m for m in existing if not m.current]
    existing = [m for m in existing if m.current]
    for memory in existing:
        if memory.content_hash == new_hash:
            return Decision(DecisionKind.NOOP, (memory.id,), "same text as an existing memory")
    new = _slot_of_candidate(candidate)
    replaced_later = [m for m in past if _said_after(m, stated_at) and _compare(new, m, retracted) != "keep"]
    conflicts: list[ExistingMemory] = []
    for memory in existing:
        verdict = _compare(new, memory, retracted)
        if verdict == "same" and _said_before(memory, stated_at):
            return Decision(DecisionKind.SUPERSEDE, (memory.id,), f"same {new.attribute}, said later in other words")
        if verdict == "same":
            return Decision(DecisionKind.NOOP, (memory.id,), f"same {new.attribute} already stored")
        if verdict == "retire" or (verdict == "retracted" and _said_after(memory, stated_at)):
            conflicts.append(memory)
        elif verdict == "retracted" and memory.metadata.get("attribute") == RETRACTION:
            conflicts.append(memory)  # "I live in Madrid again" ends an older "no longer lives in Madrid"
    conflicts += [m for m in closed_tasks(new, existing) if m not in conflicts and not _said_after(m, stated_at)]
    later = [m for m in conflicts if _said_after(m, stated_at)] + replaced_later
    if later:
        return history_of(later, [m for m in conflicts if m not in later], "said before the memory that contradicts it")
    if conflicts:
        ids = tuple(m.id for m in conflicts)
        return Decision(DecisionKind.SUPERSEDE, ids, f"new value for {new.subject}'s {new.attribute}")
    for memory in sorted(existing, key=lambda m: m.similarity, reverse=True):
        if memory.similarity < duplicate_similarity:
            break
        if memory.kind == candidate.kind and _near_duplicate(new, _slot_of_memory(memory)):
            return Decision(DecisionKind.NOOP, (memory.id,), f"near duplicate (similarity {memory.similarity:.2f})")
    return Decision(DecisionKind.ADD, (), "new information")


_CLOSING = frozenset({"event", "note", STATEMENT})
"""Attributes of a statement that may report an open item done ("I called the dentist")."""


def closed_tasks(new: _Slot, existing: Sequence[ExistingMemory]) -> list[ExistingMemory]:
    """The user's open items (task memories) that the candidate's sentence reports done (`completions`)."""
    if new.attribute not in _CLOSING or new.subject != "user" or not new.value:
        return []
    tasks = [m for m in existing if m.kind is MemoryKind.TASK and _is_open_item(m)]
    values = [_slot_of_memory(m).value or normalize_value(m.content) or "" for m in tasks]
    return [tasks[i] for i in closed_items(new.value, values)]


def _is_open_item(memory: ExistingMemory) -> bool:
    meta = memory.metadata or {}
    return meta.get("attribute") == "task" and _subject(meta.get("subject")) == "user"


def history_of(later: Sequence[ExistingMemory], older: Sequence[ExistingMemory], reason: str) -> Decision:
    """HISTORY: superseded by the earliest of the `later` memories (the next statement in valid time),
    retiring the `older` ones it replaced in its turn."""
    successor = min(later, key=lambda m: m.stated_at or datetime.max.replace(tzinfo=UTC))
    return Decision(DecisionKind.HISTORY, (successor.id,), reason, retire_ids=tuple(m.id for m in older))


def _said_after(memory: ExistingMemory, stated_at: datetime | None) -> bool:
    return stated_at is not None and memory.stated_at is not None and memory.stated_at > stated_at


def _said_before(memory: ExistingMemory, stated_at: datetime | None) -> bool:
    """Whether `memory` was said strictly before `stated_at`. A value restated later keeps the later
    wording (the memory said earlier goes to history), so the current wording of a slot does not depend
    on the order in which statements arrive."""
    return stated_at is not None and memory.stated_at is not None and memory.stated_at < stated_at


_AFFINITY = frozenset({"likes", "diet", "habit"})
"""Attributes that say how the user stands towards a thing: "hates coffee" (likes, -1) and "no
coffee" (diet) both contradict "loves coffee", whichever of them holds it."""
_NEGATED_VALUE = re.compile(r"^(?:no|not|non|never)\s+")
_SWITCHABLE = frozenset({STATEMENT, "habit"})
_RESTATABLE = frozenset({STATEMENT, "routine", "habit"})
"""Attributes whose sentence said again with other numbers replaces the old one ("I run 5 times a week now")."""
"""Attributes of what a switch to something else replaces ("uses Spotify", "drinks oat milk")."""


def _compare(new: _Slot, memory: ExistingMemory, retracted: Sequence[str]) -> str:
    """ "same" (already known), "retire" (the candidate contradicts it), "retracted" (the memory says
    the candidate's value stopped holding) or "keep"."""
    if memory.kind not in _STRUCTURED_KINDS:
        return "keep"
    old = _slot_of_memory(memory)
    if _retracts(memory, old, retracted) and old.subject in (new.subject, "user"):
        return "retire"  # "I no longer work at Acme" retires "works at Acme Corp"
    if (
        new.subject == old.subject
        and _changeable(new, old)
        and change_retires(new.value, _said(memory, old), said=new.said)
    ):
        return "retire"  # "we moved the launch to May" retires "the launch is on April 10"
    if old.attribute in _SWITCHABLE and new.subject == old.subject and switch_retires(new.value, old.value):
        return "retire"  # "I switched to almond milk" retires "I drink oat milk in my coffee"
    if new.attribute == old.attribute and _restatable(new, old) and new.subject == old.subject:
        verdict = restated_count(new.value, old.value)
        if verdict == "keep" and restated_value(new.value, old.value, said=new.said):
            return "retire"  # "I'm running 5 times a week now" retires "I run 3 times a week"
        return verdict
    if {new.attribute, old.attribute} <= _RESTATABLE and new.subject == old.subject:
        # read as a habit once and as a statement once: "I usually spend about 30 minutes cooking dinner", then
        # "I spend about 45 minutes cooking dinner each night"
        return "retire" if restated_value(new.value, _said(memory, old), said=new.said) else "keep"
    if new.attribute in _FREE_TEXT_ATTRIBUTES or new.value is None:
        return "keep"  # an event's or note's "value" is its sentence, not a comparable slot value
    verdict = _slot_verdict(new, old)
    if verdict != "keep":
        return verdict
    phrases = memory.metadata.get("retracts") or ()
    if (
        old.subject == new.subject
        and isinstance(phrases, list)
        and any(value_named(new.value, str(p)) for p in phrases)
    ):
        return "retracted"
    return "keep"


def _restatable(new: _Slot, old: _Slot) -> bool:
    """May `new` restate `old`'s sentence with other numbers? A statement, routine or habit may; so may an
    event when neither is dated ("I got pre-approved for $400,000 from Wells Fargo" after "... $350,000"):
    two dated events ("I ran 5 miles on Monday", "3 miles on Friday") are two events."""
    if new.attribute in _RESTATABLE:
        return True
    return new.attribute == "event" and not new.event_time and not old.event_time


_CHANGING = frozenset({"event", "plan", "note", "routine", STATEMENT})
"""Free-text attributes whose sentence may state a value that a later change replaces (`changes`)."""


def _changeable(new: _Slot, old: _Slot) -> bool:
    """May a change said by `new` retire `old`? Both state values (an event, a plan, a routine, a statement or
    a one-value slot such as "email"); never a task, a taste, a habit or a retraction."""
    return all(
        slot.attribute is not None
        and slot.attribute != RETRACTION
        and (slot.attribute in _CHANGING or not is_multi_valued(slot.attribute))
        for slot in (new, old)
    )


def _said(memory: ExistingMemory, old: _Slot) -> str:
    """What a stored memory states, for `changes`: its slot value and its text, normalized."""
    return " ".join(part for part in (old.value, normalize_value(memory.content)) if part)


def _retracts(memory: ExistingMemory, old: _Slot, retracted: Sequence[str]) -> bool:
    """Does one of the `retracted` phrases name what `memory` states?"""
    if old.attribute is None and "attribute" not in memory.metadata:
        return any(text_names(memory.content, phrase) for phrase in retracted)
    if old.attribute == STATEMENT:
        return any(text_names(old.value or "", phrase) for phrase in retracted)  # the sentence as said
    if old.value is None or old.attribute in _FREE_TEXT_ATTRIBUTES:
        return False
    return any(value_named(old.value, phrase) for phrase in retracted)


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b")
_UPDATE_WORDS = re.compile(r"\b(?:now|currently|still|already|actually|so far|in total|these days|anymore|again)\b")


_LEAST_FRAME_WORDS = 5
_LEAST_FRAME_WORDS_UPDATED = 3
"""...unless the new one says it is an update ("we have 3 cats now" replaces "I have 2 cats")."""
_WE = re.compile(r"^we\b")


def restated_count(new: str | None, old: str | None) -> str:
    """ "retire" when two first-person sentences say the same thing with other numbers ("I have 120
    stars" -> "I now have 150 stars"), "same" when they say it with the same ones, else "keep"."""
    if not new or not old:
        return "keep"
    frames = [" ".join(_UPDATE_WORDS.sub(" ", _NUMBER.sub("#", _WE.sub("i", text))).split()) for text in (new, old)]
    least = _LEAST_FRAME_WORDS_UPDATED if _UPDATE_WORDS.search(new) else _LEAST_FRAME_WORDS
    if frames[0] != frames[1] or "#" not in frames[0] or len(frames[0].split()) < least:
        return "keep"  # short frames ("Rae note 1", "I have 2 cats") say too little to be the same statement...
    return "same" if _NUMBER.findall(new) == _NUMBER.findall(old) else "retire"


def _slot_verdict(new: _Slot, old: _Slot) -> str:
    if old.value is None or old.attribute in _FREE_TEXT_ATTRIBUTES:
        return "keep"
    if _same_slot(new, old):
        if new.value == old.value:
            return "same" if new.polarity == old.polarity else "retire"  # "likes tea" -> "hates tea"
        if not is_multi_valued(new.attribute):
            return "retire"  # "lives in Paris" -> "in Berlin"
    affinity = new.subject == old.subject and new.attribute in _AFFINITY and old.attribute in _AFFINITY
    if affinity and diet.contradicts(_stances(new), _stances(old)):
        return "retire"  # "loves coffee" (likes) -> "no coffee" (diet); "vegetarian" -> "eats meat again"
    return "keep"


def _stances(slot: _Slot) -> frozenset[diet.Stance]:
    """What an affinity slot says the user stands towards (`diet.stances`): a diet or a habit says what
    they eat, a liking only what they like."""
    return diet.stances(slot.value, slot.polarity, eating=slot.attribute in _EATING)


_EATING = frozenset({"diet", "habit"})


def value_named(value: str, phrase: str) -> bool:
    """Does `phrase` (normalized words of a retraction) name the slot value `value`?

    True when the value's words occur in the phrase in order ("acme" in "work at acme"), or when the
    phrase ends with the start of the value ("work at acme" names "acme corp"). Values of fewer
    than 3 letters never match: they are too easily found by accident.
    """
    value_words, phrase_words = value.split(), phrase.split()
    if len("".join(value_words)) < 3 or not phrase_words:
        return False
    size = len(value_words)
    if any(phrase_words[i : i + size] == value_words for i in range(len(phrase_words) - size + 1)):
        return True
    tail = phrase_words[-1]
    if len(tail) >= 3 and value_words[0] == tail:
        return True  # "work at acme" names "acme corp"
    head = len(phrase_words)
    return head < size and len("".join(phrase_words)) >= 4 and value_words[-head:] == phrase_words  # "civic"


def text_names(content: str, phrase: str) -> bool:
    """Does a memory stored without a slot say what `phrase` retracts? Only phrases of two or more
    words count ("drink coffee" in "I drink coffee every morning"): one word is found by accident."""
    words = phrase.split()
    if len(words) < 2:
        return False
    text = normalize_value(content) or ""
    return f" {' '.join(words)} " in f" {text} "


def _near_duplicate(new: _Slot, old: _Slot) -> bool:
    """Very similar text counts as a duplicate only if nothing structured says they differ."""
    if new.attribute != old.attribute or new.subject != old.subject or new.polarity != old.polarity:
        return False
    if new.event_time and old.event_time and new.event_time[:10] != old.event_time[:10]:
        return False
    if new.attribute in _FREE_TEXT_ATTRIBUTES:
        # the value is the sentence itself: rewording is not a new fact, other numbers are ("pre-approved for
        # $400,000" after "... $350,000")
        return _NUMBER.findall(new.value or "") == _NUMBER.findall(old.value or "")
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


def _related(
    candidate: Candidate, memory: ExistingMemory, *, related_similarity: float, retracted: Sequence[str] = ()
) -> bool:
    """May `candidate` retire or rewrite `memory`? Same slot, a contradiction the rules see (opposite
    stance, a retraction naming it), for two different slots a topic both are about (`_shared_topic`),
    or (no slot on one side) that topic or similar text. Two values of one many-valued slot are never
    related: a new taste leaves the old one."""
    new, old = _slot_of_candidate(candidate), _slot_of_memory(memory)
    if _compare(new, memory, retracted) == "retire":
        return True
    if memory.kind is MemoryKind.TASK and _is_open_item(memory) and new.attribute in _CLOSING:
        return closes(new.value, old.value)  # "I called the dentist" closes "call the dentist"
    topical = _shared_topic(candidate, new, memory, old, retracted)
    if new.attribute is not None and old.attribute is not None:
        if not _same_slot(new, old):
            return topical  # "is vegetarian" (diet) may retire "loves steak" (likes)
        if new.attribute in _FREE_TEXT_ATTRIBUTES:
            return memory.similarity >= related_similarity  # e.g. a rescheduled event
        if is_multi_valued(new.attribute):
            return new.value is not None and new.value == old.value  # "loves bacon" never retires "loves steak"
        return True
    return topical or memory.similarity >= related_similarity


def _shared_topic(
    candidate: Candidate, new: _Slot, memory: ExistingMemory, old: _Slot, retracted: Sequence[str]
) -> bool:
    """Are the candidate (with what its message retracts) and the memory, about the same subject, both
    about one of the things `diet.topics` knows ("is vegetarian" / "no longer eat meat" and "loves steak"
    are about meat)? A model may see a contradiction there that the rules cannot read ("I'm vegetarian"
    against "loves steak"), while two tastes in different things ("tea", "coffee") share none."""
    if new.subject != old.subject or memory.kind not in _STRUCTURED_KINDS:
        return False
    said = diet.topics(candidate.content) | diet.topics(new.value) | diet.topics(" ".join(retracted))
    return bool(said & (diet.topics(memory.content) | diet.topics(old.value)))


def validate_llm_decision(
    proposal: Mapping[str, Any],
    candidate: Candidate,
    existing: Sequence[ExistingMemory],
    *,
    related_similarity: float = RELATED_SIMILARITY,
    retracted: Sequence[str] = (),
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
    unrelated = [
        m.id for m in targets if not _related(candidate, m, related_similarity=related_similarity, retracted=retracted)
    ]
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
    "history_of",
    "normalize_value",
    "restated_count",
    "validate_llm_decision",
    "retired_by_retraction",
    "text_names",
    "value_named",
]


def retired_by_retraction(existing: Sequence[ExistingMemory], retracted: Sequence[str]) -> tuple[str, ...]:
    """Ids of the user's slot memories whose value a retraction names, for a message that says
    something stopped ("I no longer live in Madrid") without stating what replaced it."""
    ids = []
    for memory in existing:
        old = _slot_of_memory(memory)
        if memory.kind in _STRUCTURED_KINDS and old.subject == "user" and _retracts(memory, old, retracted):
            ids.append(memory.id)
    return tuple(ids)
