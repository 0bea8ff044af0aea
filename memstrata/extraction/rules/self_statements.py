"""The general path: a first-person statement no specific rule reads, kept as it was said.

"I recently set a personal best of 27:12", "I need 120 stars to reach the gold level", "Passed CFA
Level II yesterday": each is something the user disclosed about their life, with no slot-like cue for
the specific rules. `self_statement_rules` keeps such a clause, worded in the third person with its
dates made absolute ("The user passed CFA Level II on 3 March 2026."), when `..disclosure` finds the
speaker as its subject and nothing that must not be stored (a request, an attitude, a modal, a
reference to the assistant or to something only the conversation shows, a slot's vocabulary).

Candidates carry a free-text slot so that resolution can still relate them to later messages: a
dated or past action is an `event`; a state is a `statement` whose value is the clause in the first
person, which a retraction can name ("I don't drink coffee anymore" retires "drinks coffee every
morning") and which a restatement with a new number replaces ("I now have 150 stars").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ...models import MemoryKind
from ..base import STATEMENT, Candidate
from ..dates import DateMention, guess_tense
from ..disclosure import disclosure_start, refusal, without_evaluation
from ..render import absolute_dates, third_person
from .clause import Clause, candidate, clean_value
from .events import event_dates

_PAST_ACTION = re.compile(
    r"^(?:i|we)(?:'ve| have| had)? (?:(?:just|recently|finally|already|also|actually|officially) )*"
    r"(?:[a-z]+(?<!e)ed|went|ran|got|took|made|met|came|left|began|won|lost|bought|sold|flew|drove|wrote|gave|did|quit"
    r"|became|broke|found|spent|set|hit|read|saw|swam|rode|sang|built|caught|taught|brought|held|kept|paid"
    r"|sent|tried|finished|started|passed)\b",
    re.IGNORECASE,
)


def self_statement_rules(ctx: Clause) -> list[Candidate]:
    """The clause as a memory when it is a storable first-person statement about the user."""
    start = disclosure_start(ctx.clause)
    if start is None:
        return []
    return stated(ctx, start, checked=True)


def stated(
    ctx: Clause,
    start: int,
    *,
    checked: bool,
    confidence: float = 0.6,
    trim: Callable[[str], str] = without_evaluation,
) -> list[Candidate]:
    """The clause from `start` (its subject) on as a statement or dated event, in the third person,
    without the comment `trim` cuts off its end.

    `checked` asks `disclosure.refusal` first; the learned path (`learned`) passes False, having
    weighed the clause itself.
    """
    masked = trim(ctx.clause[start:])
    said = ctx.original[start : start + len(masked)]
    mentions = event_dates(Clause(masked, said, ctx.at, ctx.name), guess_tense(masked))
    lead = [] if mentions else _lead_dates(ctx, start, masked)
    dates = mentions or lead
    if checked and refusal(masked, dated=bool(dates)) is not None:
        return []
    if not masked.strip(" ,.;:!?"):
        return []
    if lead:  # worded from the date on: "Last week, I ..." -> "In the week of 6 March 2026, the user ..."
        begin = lead[0].span[0]
        moved = replace(lead[0], span=(0, lead[0].span[1] - begin))
        content = third_person(absolute_dates(ctx.original[begin : start + len(masked)], [moved]), ctx.name)
    else:
        content = third_person(absolute_dates(said, mentions), ctx.name)
    event = bool(dates) or bool(_PAST_ACTION.match(masked))
    return [
        candidate(
            ctx,
            kind=MemoryKind.EVENT if event else MemoryKind.FACT,
            category="event" if event else "identity",
            content=content,
            attribute="event" if event else STATEMENT,
            value=clean_value(said),
            event_time=dates[0].start if dates else None,
            confidence=confidence,
        )
    ]


def _lead_dates(ctx: Clause, start: int, statement: str) -> list[DateMention]:
    """The date of a time adverbial before the subject ("Last weekend, I caught a pike"), in the
    statement's tense: it dates the statement though the statement's wording starts at the subject."""
    if start == 0:
        return []
    lead = Clause(ctx.clause[:start], ctx.original[:start], ctx.at, ctx.name)
    return event_dates(lead, guess_tense(statement))[:1]
