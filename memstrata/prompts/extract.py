"""The extraction prompt: conversation → JSON list of structured facts worth remembering."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..extraction.base import CATEGORIES, ENTITY_TYPES
from ..llm.base import ChatMessage
from ._format import Turn, day, numbered, require_turns, turn_line
from .parse import ParsedItems, parse_items

KINDS = ("fact", "preference", "event", "note", "task")
"""The memory kinds an extracted fact may have (a subset of `MemoryKind`)."""

KIND_OF_CATEGORY = {
    "preference": "preference",
    "identity": "fact",
    "relation": "fact",
    "event": "event",
    "request": "note",
    "open_item": "task",
}

SYSTEM = """\
You extract long-term memories from a conversation between a user and an assistant.
Store what will still matter in later conversations: the user's preferences, identity, relations,
plans and dated events, explicit requests to remember something, and open items to follow up on.
Facts about other people the user talks about are memories too (subject = their lower-cased name).
Do NOT store: one-off questions, greetings, small talk, general knowledge, the assistant's own
suggestions, error messages or stack traces. When nothing is worth remembering, return no facts.

Use assistant messages only as context; every fact must be stated or confirmed by the user.
Resolve relative dates ("yesterday", "last Saturday", "next month") against the date of the
message that says them, never against today. Write each content as one short third-person
sentence ("The user's manager is Sarah.") that still makes sense on its own.

Fields of each fact:
- kind: one of fact, preference, event, note, task
- category: one of preference, identity, relation, event, request, open_item
  (request = an explicit "remember that…"; open_item = something to follow up or be reminded of)
- content: the third-person sentence
- subject: "user", or the lower-cased name of the person the fact is about
- attribute: the slot the fact fills, e.g. "name", "location", "employer", "job_title",
  "relation:manager", "relation:sister", "preference:answer_length", "likes" (likes AND dislikes:
  value names the thing, polarity says which), "plan", "task", "event", "note"; null if none fits
- value: the slot's value as short text (a name, a city, "short"), or null
- polarity: 1 when affirmed or liked, -1 when negated or disliked
- event_date: "YYYY-MM-DD" when the fact is tied to a date, else null
- entities: the named people, places, organizations and projects it mentions:
  [{"name": "...", "type": "person|place|organization|project|other"}]
- profile: {"category": "...", "key": "...", "value": "..."} for a stable key/value profile fact, else null
- source: the number of the message the fact comes from
- confidence: 0 to 1, how sure you are the user meant it

Reply with one JSON object and nothing else: {"facts": [...]}"""

EXAMPLE_INPUT = """\
0. 2024-03-08 (Friday) user: My manager Sarah wants the Q3 report by June 15. I hate long emails, so keep \
answers short. What's the capital of France?"""

_EXAMPLE_FACTS: list[dict[str, Any]] = [
    {
        "kind": "fact",
        "category": "relation",
        "content": "The user's manager is Sarah.",
        "subject": "user",
        "attribute": "relation:manager",
        "value": "Sarah",
        "polarity": 1,
        "event_date": None,
        "entities": [{"name": "Sarah", "type": "person"}],
        "profile": {"category": "relation", "key": "manager", "value": "Sarah"},
        "source": 0,
        "confidence": 0.95,
    },
    {
        "kind": "task",
        "category": "open_item",
        "content": "The user must deliver the Q3 report to Sarah by 2024-06-15.",
        "subject": "user",
        "attribute": "task",
        "value": "Q3 report",
        "polarity": 1,
        "event_date": "2024-06-15",
        "entities": [{"name": "Sarah", "type": "person"}, {"name": "Q3 report", "type": "project"}],
        "profile": None,
        "source": 0,
        "confidence": 0.9,
    },
    {
        "kind": "preference",
        "category": "preference",
        "content": "The user prefers short answers.",
        "subject": "user",
        "attribute": "preference:answer_length",
        "value": "short",
        "polarity": 1,
        "event_date": None,
        "entities": [],
        "profile": {"category": "preference", "key": "answer_length", "value": "short"},
        "source": 0,
        "confidence": 0.9,
    },
    {
        "kind": "preference",
        "category": "preference",
        "content": "The user dislikes long emails.",
        "subject": "user",
        "attribute": "likes",
        "value": "long emails",
        "polarity": -1,
        "event_date": None,
        "entities": [],
        "profile": None,
        "source": 0,
        "confidence": 0.85,
    },
]
EXAMPLE_OUTPUT = '{"facts": [\n' + ",\n".join(json.dumps(fact) for fact in _EXAMPLE_FACTS) + "\n]}"
"""The answer to the example (the capital question is a one-off: not stored)."""


def build_extraction_messages(
    turns: Sequence[Turn],
    *,
    today: date,
    known_name: str | None = None,
    existing: Sequence[str] = (),
) -> list[ChatMessage]:
    """Messages asking for the facts in `turns` (numbered, dated when turns have `at`).

    `today` is the date of the conversation (normally the last message's date, not the wall clock);
    `existing` lists memories already stored, so the model does not repeat them.
    """
    require_turns(turns, "extraction")
    user_name = f"The user's name is {known_name}.\n" if known_name else ""
    conversation = numbered([turn_line(turn) for turn in turns])
    known = f"\nAlready remembered (do not repeat these):\n{numbered(list(existing))}\n" if existing else ""
    return [
        ChatMessage("system", SYSTEM),
        ChatMessage("user", f"Example conversation:\n{EXAMPLE_INPUT}"),
        ChatMessage("assistant", EXAMPLE_OUTPUT),
        ChatMessage(
            "user",
            f"Today is {day(today)}.\n{user_name}{known}\nConversation:\n{conversation}\n\n"
            'Reply with {"facts": [...]} only.',
        ),
    ]


def _lower_choice(value: Any, choices: tuple[str, ...], default: str) -> str:
    text = str(value or "").strip().lower().replace(" ", "_")
    return text if text in choices else default


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1)
    type: str = "other"

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, value: Any) -> str:
        return _lower_choice(value, tuple(ENTITY_TYPES), "other")


class ExtractedProfile(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    category: str = Field(min_length=1)
    key: str = Field(min_length=1)
    value: str = Field(min_length=1)


class ExtractedFact(BaseModel):
    """One fact as the model reports it, normalized; unknown enum values fail validation."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    kind: str = "fact"
    category: str
    content: str = Field(min_length=3)
    subject: str = "user"
    attribute: str | None = None
    value: str | None = None
    polarity: int = 1
    event_date: date | None = None
    entities: list[ExtractedEntity] = Field(default_factory=list)
    profile: ExtractedProfile | None = None
    source: int | None = None
    confidence: float = 0.8

    @model_validator(mode="before")
    @classmethod
    def _kind_from_category(cls, data: Any) -> Any:
        """A missing or unknown kind is derived from the category (small models confuse the two)."""
        if not isinstance(data, dict):
            return data
        kind = _lower_choice(data.get("kind"), KINDS, "")
        category = _lower_choice(data.get("category"), tuple(CATEGORIES), "")
        return {**data, "kind": kind or KIND_OF_CATEGORY.get(category, "fact")}

    @field_validator("category", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return str(value).strip().lower().replace(" ", "_") if value is not None else value

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        if value not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}")
        return value

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: Any) -> str:
        text = " ".join(str(value or "").split()).lower()
        return "user" if text in ("", "i", "me", "the user", "user") else text

    @field_validator("attribute", "value", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("polarity", mode="before")
    @classmethod
    def _polarity(cls, value: Any) -> int:
        if value is False:
            return -1
        if isinstance(value, str):
            return -1 if value.strip().lower() in ("-1", "negative", "neg", "dislike", "false") else 1
        return -1 if isinstance(value, int | float) and value < 0 else 1

    @field_validator("event_date", mode="before")
    @classmethod
    def _date_part(cls, value: Any) -> date | None:
        """An ISO date (a datetime's date part); anything unreadable ("next week") becomes None."""
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        try:
            return date.fromisoformat(str(value).strip()[:10])
        except ValueError:
            return None

    @field_validator("source", mode="before")
    @classmethod
    def _source_index(cls, value: Any) -> int | None:
        match = re.search(r"\d+", str(value)) if value is not None else None
        return int(match.group()) if match else None

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamped(cls, value: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return 0.8
        return min(1.0, max(0.0, number)) if number == number else 0.8

    @field_validator("entities", mode="before")
    @classmethod
    def _entity_names(cls, value: Any) -> Any:
        """Accept bare names; drop entries without a name rather than the whole fact."""
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return [] if value is None else value
        items = [{"name": item} if isinstance(item, str) else item for item in value]
        return [item for item in items if isinstance(item, dict) and str(item.get("name") or "").strip()]


def parse_extraction(text: str) -> ParsedItems[ExtractedFact]:
    """Validated facts from the model's answer; invalid facts are dropped and described."""
    return parse_items(text, ExtractedFact, key="facts")
