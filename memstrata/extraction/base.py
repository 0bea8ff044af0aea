"""The extraction contract: messages in, candidate memories out.

An `Extractor` turns a few chat messages into `Candidate`s: small, third-person statements
with enough structure (subject, attribute, value, polarity) for resolution to decide whether a
candidate duplicates, supersedes or adds to what is already stored. Extractors do no I/O of
their own beyond what they are given (an LLM extractor receives its client at construction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from ..errors import InvalidInput
from ..models import MemoryKind

Role = Literal["user", "assistant", "system"]
EntityType = Literal["person", "place", "organization", "project", "other"]

CATEGORIES = ("preference", "identity", "relation", "event", "request", "open_item", "instruction", "entity")
"""The category labels a candidate may carry.

"instruction" is a standing order to the assistant ("always answer in French", "keep replies short"):
its kind is `MemoryKind.PROCEDURE`, not a preference. "entity" is a fact about a named person, place,
organization or project other than the user ("Sarah moved to the London office."): its `subject` is
that entity's normalized name.
"""

ROLES: tuple[Role, ...] = ("user", "assistant", "system")
ENTITY_TYPES: tuple[EntityType, ...] = ("person", "place", "organization", "project", "other")

STATEMENT = "statement"
"""Attribute of a first-person sentence kept as said because no slot fits it; its value is the sentence."""

MULTI_VALUED_ATTRIBUTES = frozenset(
    {
        "likes",
        "habit",
        "allergy",
        "language",
        "diet",
        "plan",
        "task",
        "note",
        "event",
        "routine",
        "project",
        "fact",
        "health",
        STATEMENT,
    }
)
"""Attributes that hold many values at once: a new value never replaces another.

"likes" carries both likes and dislikes: `value` names the object, `polarity` says which
(+1 likes, -1 dislikes), so "hates tea" can retire "likes tea" but never "likes coffee".
"statement" is a first-person sentence kept as said because no slot fits it ("I need 120 stars to
reach gold"): its value is that sentence.
Every other attribute ("location", "relation:manager", "preference:answer_length") is one slot.
"""


@dataclass(frozen=True, slots=True)
class EntityMention:
    """A named thing a candidate mentions (person, place, organization, project, other)."""

    name: str
    type: EntityType = "other"

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise InvalidInput("entity name is empty")
        if self.type not in ENTITY_TYPES:
            raise InvalidInput(f"unknown entity type {self.type!r}; known: {', '.join(ENTITY_TYPES)}")


@dataclass(frozen=True, slots=True)
class ProfileSlot:
    """A key/value profile fact (e.g. category "identity", key "location", value "Berlin")."""

    category: str
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory an extractor proposes to store.

    `content` is a third-person sentence ("Alice lives in Berlin.", "The user prefers short answers.").
    `subject` is who it is about, normalized ("user" or a lower-cased name such as "sarah").
    `attribute` names a slot ("location", "relation:manager", "preference:answer_length", "likes")
    or is None when the statement is not slot-like. `polarity` is +1 (likes/affirms) or -1
    (dislikes/negates). `event_time` is an absolute, tz-aware time resolved against the message time.

    Updates and negations: a statement that a value no longer holds ("I no longer work at Acme",
    "I used to live in Madrid", "I'm not vegan anymore") is a candidate for that slot and value with
    `polarity=-1`, so resolution can retire the stored value; the new value, when the message gives one
    ("... I joined Globex", "I hate coffee now"), is its own candidate with the current polarity. A
    negated slot with `value=None` ("I quit my job") says the slot's current value, whatever it is, no
    longer holds.

    Entities: `entities` names every person, place, organization or project the statement mentions,
    as written ("Sarah", "London"), for linking the stored memory to those entities. A fact about
    someone else has `category="entity"` and `subject` set to that entity's lower-cased name
    ("sarah"); its `entities` start with that entity.
    """

    kind: MemoryKind
    content: str
    category: str
    subject: str = "user"
    attribute: str | None = None
    value: str | None = None
    polarity: int = 1
    event_time: datetime | None = None
    entities: tuple[EntityMention, ...] = ()
    profile: ProfileSlot | None = None
    confidence: float = 0.8
    source_text: str = ""

    def __post_init__(self) -> None:
        if not self.content.strip():
            raise InvalidInput("candidate content is empty")
        if self.category not in CATEGORIES:
            known = ", ".join(CATEGORIES)
            raise InvalidInput(f"unknown candidate category {self.category!r}; known: {known}")
        if self.polarity not in (1, -1):
            raise InvalidInput(f"polarity must be 1 or -1, got {self.polarity!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidInput(f"confidence must be between 0 and 1, got {self.confidence}")
        if self.event_time is not None and self.event_time.tzinfo is None:
            raise InvalidInput("event_time must be timezone-aware")

    def metadata(self) -> dict[str, object]:
        """The structured fields resolution reads back from a stored memory's metadata."""
        data: dict[str, object] = {
            "subject": self.subject,
            "attribute": self.attribute,
            "value": self.value,
            "polarity": self.polarity,
            "category": self.category,
        }
        if self.event_time is not None:
            data["event_time"] = self.event_time.isoformat()
        if self.kind is MemoryKind.PROCEDURE:
            data["procedure_type"] = "instruction"
            data["task"] = "every reply"
        return data

    @property
    def entity_names(self) -> tuple[str, ...]:
        """The names of the entities this candidate mentions, in order, without repeats."""
        return tuple(dict.fromkeys(mention.name for mention in self.entities))


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message given to an extractor. `at` is when it was said (tz-aware, UTC)."""

    role: Role
    content: str
    at: datetime
    speaker: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidInput(f"unknown message role {self.role!r}; known: {', '.join(ROLES)}")
        if self.at.tzinfo is None:
            raise InvalidInput("message time `at` must be timezone-aware")


@runtime_checkable
class Extractor(Protocol):
    """Turns messages into candidate memories. Pure with respect to storage: it never writes."""

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        """Candidates found in `messages`; `known_name` is the user's name when already known."""
        ...


ExtractorName = Literal["llm", "rules", "custom"]
"""Which extractor found a learn's candidates: the LLM, the offline rules, or one of the caller's own."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """The candidates of one extraction, with which extractor answered and why a fallback answered
    instead of the LLM (None when nothing fell back)."""

    candidates: tuple[Candidate, ...]
    extractor: ExtractorName
    fallback_reason: str | None = None


def extract_reported(extractor: Extractor, messages: Sequence[Message], *, known_name: str | None = None) -> Extraction:
    """`extractor.extract`, saying which extractor answered: an extractor with `extract_reported` (the LLM
    extractor, which may fall back) says it itself; otherwise its `name` ("rules") or "custom"."""
    reported = getattr(extractor, "extract_reported", None)
    if callable(reported):
        found = reported(messages, known_name=known_name)
        if isinstance(found, Extraction):
            return found
    name = getattr(extractor, "name", None)
    kind: ExtractorName = name if name in ("llm", "rules") else "custom"
    return Extraction(tuple(extractor.extract(messages, known_name=known_name)), kind)


def is_multi_valued(attribute: str | None) -> bool:
    """True when many values of `attribute` can hold at once (so none replaces another)."""
    return attribute is None or attribute in MULTI_VALUED_ATTRIBUTES


__all__ = [
    "CATEGORIES",
    "Candidate",
    "EntityMention",
    "ENTITY_TYPES",
    "MULTI_VALUED_ATTRIBUTES",
    "ROLES",
    "STATEMENT",
    "EntityType",
    "Extraction",
    "Extractor",
    "ExtractorName",
    "Message",
    "ProfileSlot",
    "Role",
    "extract_reported",
    "is_multi_valued",
]
