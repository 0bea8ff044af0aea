"""Routine rules: something the user does on a schedule ("Every Friday I have a team retro at 4pm",
"I go to the gym on Tuesdays and Thursdays", "My book club meets every other Wednesday").

A routine has no single date, so it is never worded with one: the recurrence stays as said.
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate
from ..render import third_person
from ..skip import leans_on_context
from .clause import Clause, candidate, clean_value

_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
RECURRENCE = re.compile(
    rf"\b(?:every|each) (?:other |single |second )?(?:{_DAY}|day|morning|evening|night|weekday|weekend|week|month"
    rf"|year|summer|winter|spring|fall|autumn|quarter)s?\b"
    rf"|\bon (?:{_DAY}s|weekdays|weekends|(?:{_DAY}s?,? )+(?:and|&) {_DAY}s)\b"
    rf"|\b(?:on )?{_DAY} (?:nights|mornings|evenings|afternoons)\b"
    rf"|^(?:{_DAY}s|weekdays|weekends|mornings|evenings)\b"
    rf"|\b(?:once|twice|three times|four times|five times|\d+ times|\d+x) (?:a|per|each|every)"
    rf" (?:day|week|month|year)\b"
    rf"|\b(?:daily|weekly|biweekly|fortnightly|monthly|nightly)\b",
    re.I,
)
_DOES = re.compile(
    r"\b(?:i|we)(?:'ve| have| am|'m)? (?:been )?(?:usually |always |normally |typically |generally |also |still |now )?"
    r"(?:have|go|do|play|take|attend|run|swim|teach|meet|work|volunteer|visit|call|train|practi[cs]e|cook|walk|"
    r"drive|bike|cycle|ride|hit|lift|study|host|join|get|see|skype|facetime|babysit|pick up|drop off|coach|"
    r"lead|help|clean|shop|sing|dance|paint|write|read|meditate|stream|record|watch|eat|fast|jog|climb|hike|"
    r"[a-z]+ing)\b"
    r"|\bmy [\w\- ]{2,40}? (?:is|are|meets|happens|runs|takes place|starts|falls)\b",
    re.I,
)
_ONGOING = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:i|we)(?:'ve| have) been (?!(?:thinking|wondering|feeling|trying|looking|meaning|waiting|"
    r"going through|dealing|struggling|having trouble|asked|told|hoping|considering)\b)[a-z]+ing\b.*?"
    r"\b(?:for|since) (?:about |over |almost |nearly |around |the (?:past|last) )?(?:\d+|a|an|one|two|three|four|"
    r"five|six|seven|eight|nine|ten|a few|a couple of|several|many|\d+\+?) (?:days?|weeks?|months?|years?|decades?)\b",
    re.I,
)
"""Something the user has kept doing for a while ("I've been using my Fitbit for 6 months now")."""
_HINTS = (
    "every",
    "each",
    "day",
    "week",
    "month",
    "year",
    "night",
    "morning",
    "evening",
    "times",
    "once",
    "twice",
    "daily",
    "nightly",
    "summer",
    "winter",
    "spring",
    "fall",
    "autumn",
    "quarter",
    "been",
)
"""Words every routine contains (a recurrence or "been ... for"): a cheap test before the patterns."""
_NOT_ROUTINE = re.compile(
    r"\bevery (?:time|single time|now and then|so often|once in a while|other day i (?:think|wonder))\b"
    r"|\b(?:used to|anymore|no longer)\b|\bwould\b",
    re.I,
)


def routine_rules(ctx: Clause) -> list[Candidate]:
    """The clause as a routine when it says the user does something on a recurring schedule."""
    clause = ctx.clause
    low = clause.casefold()
    if not any(hint in low for hint in _HINTS):
        return []
    recurring = RECURRENCE.search(clause) and _DOES.search(clause)
    if not (recurring or _ONGOING.search(clause)) or _NOT_ROUTINE.search(clause) or leans_on_context(clause):
        return []
    return [
        candidate(
            ctx,
            kind=MemoryKind.FACT,
            category="event",
            content=third_person(ctx.original, ctx.name),
            attribute="routine",
            value=clean_value(ctx.original),
            confidence=0.75,
        )
    ]
