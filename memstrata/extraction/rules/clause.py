"""What every rule reads (a `Clause`) and the helpers rules share to build their `Candidate`s."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ...models import MemoryKind
from ..base import Candidate, EntityMention, ProfileSlot
from ..dates import Prefer, find_dates
from ..render import sentence
from .mentions import merged, people


@dataclass(frozen=True, slots=True)
class Clause:
    """What every rule needs: the clause, its original text, the message time, the user's name."""

    clause: str  # quoted passages masked with underscores
    original: str
    at: datetime
    name: str | None

    @property
    def subject(self) -> str:
        return self.name or "the user"


Rule = Callable[[Clause], list[Candidate]]


def clean_value(value: str) -> str:
    """A captured value without surrounding punctuation or quotes, single-spaced."""
    value = value.strip(" ,.;:!?\"'")
    return re.sub(r"\s+", " ", value)


def first_date(text: str, at: datetime, *, prefer: Prefer | None) -> datetime | None:
    """When the first date mentioned in `text` starts (resolved as of `at`), or None."""
    mentions = find_dates(text, at, prefer=prefer)
    return mentions[0].start if mentions else None


def candidate(
    ctx: Clause,
    *,
    kind: MemoryKind,
    category: str,
    content: str,
    attribute: str | None = None,
    value: str | None = None,
    polarity: int = 1,
    event_time: datetime | None = None,
    entities: tuple[EntityMention, ...] = (),
    profile: ProfileSlot | None = None,
    confidence: float = 0.8,
) -> Candidate:
    """A `Candidate` about the user from `ctx`, its content tidied into one sentence.

    Besides the `entities` a rule names, the people the clause mentions ("lunch with Sarah") are listed.
    """
    return Candidate(
        kind=kind,
        content=sentence(content),
        category=category,
        subject="user",
        attribute=attribute,
        value=value,
        polarity=polarity,
        event_time=event_time,
        entities=merged(entities, people(ctx.clause)),
        profile=profile,
        confidence=confidence,
        source_text=ctx.original,
    )
