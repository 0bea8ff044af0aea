"""Milestone rules: a life event worth keeping even without a date ("Passed CFA Level II yesterday",
"I just got promoted", "We adopted a puppy", "Finally defended my thesis!").

The subject may be left out, as people do in chat ("Passed ...", "Got engaged!"). A date, when given,
is resolved against the message time and becomes the event time; otherwise the event time is unset.
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate
from ..dates import find_dates
from ..render import absolute_dates, third_person
from ..skip import leans_on_context
from .clause import Clause, candidate, clean_value

_CREDENTIAL = (
    r"(?:driving |driver's |drivers )?(?:license|licence|degree|diploma|phd|ph\.d\.|doctorate|master's|masters|mba|"
    r"bachelor's|black belt|certification|certificate|green card|visa|citizenship|residency|tenure|scholarship|"
    r"internship|offer|job|promotion|raise|award|grant)"
)
_STUDY = (
    r"(?:degree|thesis|dissertation|course|bootcamp|marathon|half[- ]marathon|certification|training|residency|"
    r"internship|apprenticeship|phd|masters|master's|first (?:marathon|triathlon|novel|book|semester|year))"
)
_MILESTONE_VERB = (
    r"passed|graduated|defended|retired|adopted|published|got (?:promoted|engaged|married|divorced|certified|"
    rf"accepted|hired|a new job|into|my (?:first )?{_CREDENTIAL}|an? {_CREDENTIAL}|the {_CREDENTIAL}|a puppy|a dog|"
    r"a cat|a kitten)|earned (?:my|a|an|the)|won (?:a|an|the|my|first)|became (?:a|an)|(?:completed|finished) "
    r"(?:my|the|a|an) "
    rf"(?:\w+ )?{_STUDY}|started (?:a new job|my new job|working (?:at|for)|at|grad school|college|university|"
    r"my phd|a phd|my masters|a new role|my own business|a company|a business)|signed (?:a|the|my) "
    r"(?:lease|contract|offer|book deal)|bought (?:a|my first|our first|my|our) (?:new )?(?:house|home|car|flat|"
    r"apartment|condo|place)|had (?:a|my|our) (?:baby|son|daughter|twins)|ran (?:a|my first|the|my) "
    r"(?:marathon|half[- ]marathon|5k|10k|ultra)|moved (?:in )?(?:together|in with)|closed on (?:a|the|our|my) "
    r"(?:house|home|flat|apartment|condo)|launched|quit (?:smoking|drinking|my job)"
)
_MILESTONE = re.compile(
    rf"(?:^|(?:^|(?<=[\s,;:]))(?i:i|we)(?:'ve| have)? )"
    rf"(?:(?:just|finally|officially|recently|actually|also|successfully) )*(?P<verb>{_MILESTONE_VERB})\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:not|never|didn't|did not|haven't|have not|hasn't|almost|nearly|failed)\b", re.I)


def milestone_rules(ctx: Clause) -> list[Candidate]:
    """A milestone the user (or the user's household) reached, dated when the clause names a date."""
    match = _MILESTONE.search(ctx.clause)
    if not match or _NEGATED.search(ctx.clause[: match.end()]) or leans_on_context(ctx.clause):
        return []
    text = ctx.original[match.start() :]
    mentions = find_dates(text, ctx.at, prefer="past")
    worded = absolute_dates(text, mentions)
    if not re.match(r"(?i:i|we)\b", worded):
        worded = f"I {worded[0].lower()}{worded[1:]}"
    return [
        candidate(
            ctx,
            kind=MemoryKind.EVENT,
            category="event",
            content=third_person(worded, ctx.name),
            attribute="event",
            value=clean_value(text),
            event_time=mentions[0].start if mentions else None,
            confidence=0.75,
        )
    ]
