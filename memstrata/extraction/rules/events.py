"""Event rules: something that happened or will happen to the user on a date ("I moved to Lisbon
last week", "my interview is next Friday"), worded with the date made absolute.
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate, EntityMention
from ..dates import DateMention, Prefer, find_dates, guess_tense
from ..lexicon import EVENT_CUE, EVENT_NOUNS, LOWER, NOT_NAMES, PERSONAL, PLACE, UPPER
from ..render import absolute_dates, article, render_date, third_person, without_end_punctuation
from ..skip import leans_on_context
from .clause import Clause, candidate, clean_value

_EVENT_NOUN = re.compile(rf"\b(?:{EVENT_NOUNS})s?\b", re.I)
_DEADLINE_BEFORE = re.compile(r"\b(?:by|before|until|till|for|due)\s*$", re.I)
_STATE_ONLY = re.compile(
    r"^(?:i'm|i am)\s+(?:(?:a bit|so|very|really|quite|pretty|too|kind of)\s+)*[a-z]+"
    r"(?:\s+(?:for|today|tonight|now))",
    re.I,
)
_IN_NOUN_PHRASE = re.compile(r"\b(?:a|an|every|each|my|our|his|her|their|'s)\s*$", re.I)
_DATE_AS_SUBJECT = re.compile(r"\s+(?:was|has|had|has been|had been)\b")
_DAY_IS = re.compile(r"^(?:today|tonight|tomorrow|yesterday|the day after tomorrow) is (?P<rest>.+)$", re.I)
_PROGRESSIVE_START = re.compile(rf"^[{UPPER}][{LOWER}]+ing\b")
_PAST_START = re.compile(
    rf"^(?:[{UPPER}][{LOWER}]+ed|Took|Went|Had|Got|Made|Saw|Met|Ran|Spent|Bought|Found|Came|Was|Did)\b"
)
_BARE_NOUN_PHRASE = re.compile(
    rf"^(?!(?:i|we|my|our|the|a|an|this|that|it|he|she|they|you|your)\b)(?!.*\b(?:my|our|[a-z]+ed)\b)"
    rf"[{UPPER}]?[{LOWER}-]+(?: [{LOWER}-]+){{0,3}}"
    r"(?<!ing)(?<!ed)(?<!\bis)(?<!\bare)(?<!\bwas)\s*(?:on\s*)?$",
    re.IGNORECASE,
)
"""A noun phrase alone before the date ("Half marathon next Sunday", "Exam on the 20th"): chat for "I have ..."."""
_PLACE_CUE = re.compile(rf"\b(?:to|in|from|at|near|visit|visiting) (?P<v>{PLACE})")


_RECENT = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:i|we|my \w+ and i)(?:'ve| have)? (?P<adv>just|recently|finally|also just|only just) "
    r"(?!(?:wanted|realized|realised|thought|noticed|figured|remembered|wondered|felt|said|meant|mentioned|"
    r"checked|asked|told|heard|looked|tried|needed|had to|saw that|read|got done|came across|found out|learned that"
    r"|woke up|got up|ate|had (?:a|some|my) (?:snack|coffee|nap|drink|bite))\b)"
    rf"(?P<verb>[{LOWER}]+ed|went|ran|had|got|took|made|met|came back|left|began|won|bought|sold|flew|drove|"
    r"wrote|gave|quit|became|broke|found|spent|started|finished|joined|moved|signed|booked|adopted|"
    r"participated|volunteered|attended|visited|returned|graduated|competed|performed|published)\b",
    re.I,
)
"""A past action marked recent ("I just got back from ...", "we recently moved ..."), dated or not."""
_NOT_EVENTS = frozenset(
    "wanted realized realised thought noticed figured remembered wondered felt said meant mentioned checked asked "
    "told heard looked tried needed used liked loved hated enjoyed preferred decided seemed appeared".split()
)


def event_rules(ctx: Clause) -> list[Candidate]:
    """An event when the clause has an event cue, is about the user or names an event, and has a date;
    or, without a date, a past action the user marks as recent ("I just got back from ...")."""
    clause = ctx.clause
    if not EVENT_CUE.search(clause) or _STATE_ONLY.match(clause) or leans_on_context(clause):
        return []
    if not (PERSONAL.search(clause) or _EVENT_NOUN.search(clause)):
        return []
    mentions = event_dates(ctx, guess_tense(clause))
    if not mentions:
        return _recent_event(ctx)
    first = mentions[0]
    if first.span[0] == 0 and _DATE_AS_SUBJECT.match(ctx.original[first.span[1] :]):
        return []  # the date is the grammatical subject ("This week has been busy"): not an event
    return [
        candidate(
            ctx,
            kind=MemoryKind.EVENT,
            category="event",
            content=third_person(_event_text(ctx.original, mentions), ctx.name),
            attribute="event",
            value=clean_value(ctx.original),
            event_time=first.start,
            entities=_place_entities(ctx.clause),
            confidence=0.7,
        )
    ]


_RECENT_AFTER = re.compile(
    rf"(?:^|(?<=[\s,;:]))(?:i|we) (?P<verb>[{LOWER}]+ed|went|ran|took|made|met|began|won|bought|sold|flew|drove|"
    r"wrote|gave|quit|became|found|spent|started|finished|joined|moved|signed|booked|adopted|got (?:a|an|my|our|back))"
    r"\b[^,.;!?]{3,80}? (?P<adv>recently|lately)\b",
    re.I,
)


def _recent_event(ctx: Clause) -> list[Candidate]:
    """An undated past action marked "just" (dated the message's day) or "recently"/"finally" (undated)."""
    match = _RECENT.search(ctx.clause) or _RECENT_AFTER.search(ctx.clause)
    if not match or match.group("verb").casefold() in _NOT_EVENTS:
        return []
    before, after = ctx.clause[: match.start()].strip(), ctx.clause[match.end() :].strip(" .!?")
    if not after or (before and not re.search(r"(?:[,;:]|\b(?:and|so|but|then))$", before, re.I)):
        return []  # "the bike I just purchased": a relative clause, or nothing done
    just = match.group("adv").casefold().endswith("just")
    day = ctx.at.replace(hour=0, minute=0, second=0, microsecond=0)
    return [
        candidate(
            ctx,
            kind=MemoryKind.EVENT,
            category="event",
            content=third_person(ctx.original[match.start() :], ctx.name),
            attribute="event",
            value=clean_value(ctx.original),
            event_time=day if just else None,
            entities=_place_entities(ctx.clause),
            confidence=0.65,
        )
    ]


def event_dates(ctx: Clause, prefer: Prefer | None) -> list[DateMention]:
    """Dates in the clause, except deadlines ("by Friday", "due next week") and a day named inside a
    noun phrase ("a Sunday morning yoga routine", "my family's Sunday dinner"). Seasons count ("last
    spring"). Each date takes the tense of its own part of the clause when that part has one: "took the
    bar exam in July and the results come out in November" dates July in the past, November ahead."""
    return [
        _in_own_tense(ctx, mention, prefer)
        for mention in find_dates(ctx.original, ctx.at, prefer=prefer, seasons=True)
        if not _DEADLINE_BEFORE.search(ctx.original[: mention.span[0]])
        and not _IN_NOUN_PHRASE.search(ctx.original[: mention.span[0]])
    ]


_PART_BOUNDARY = re.compile(
    r"(?:,|;|\band\b|\bbut\b|\bso\b|\bwhile\b|\bthen\b)(?!.*(?:,|;|\band\b|\bbut\b|\bso\b|\bwhile\b|\bthen\b))", re.I
)


def _in_own_tense(ctx: Clause, mention: DateMention, prefer: Prefer | None) -> DateMention:
    """`mention` resolved in the tense of the clause part it belongs to, when that differs."""
    before = ctx.original[: mention.span[0]]
    boundary = _PART_BOUNDARY.search(before)
    own = guess_tense(ctx.original[boundary.end() if boundary else 0 : mention.span[1]])
    if own is None or own == prefer:
        return mention
    again = find_dates(mention.text, ctx.at, prefer=own, seasons=True)
    if len(again) != 1 or again[0].text != mention.text:
        return mention
    return DateMention(mention.text, again[0].start, again[0].granularity, mention.span)


def _event_text(original: str, mentions: list[DateMention]) -> str:
    """The clause with absolute dates, in the first person, ready for `third_person`."""
    first = mentions[0]
    text = absolute_dates(original, mentions)
    leading = _DAY_IS.match(original)
    if leading and first.span[0] == 0:
        text = f"{without_end_punctuation(leading.group('rest'))} is on {render_date(first)}"
    if _BARE_NOUN_PHRASE.match(original[: first.span[0]]) and not _PROGRESSIVE_START.match(text):
        return f"I have {article(text)} {text[0].lower()}{text[1:]}"  # "Dentist appointment tomorrow"
    if _PROGRESSIVE_START.match(text):
        return f"I'm {text[0].lower()}{text[1:]}"
    if _PAST_START.match(text):
        return f"I {text[0].lower()}{text[1:]}"
    return text


def _place_entities(clause: str) -> tuple[EntityMention, ...]:
    """Places named after "to", "in", "from", "at", "near" or "visit"."""
    found: list[EntityMention] = []
    for match in _PLACE_CUE.finditer(clause):
        value = match.group("v")
        if value.split()[0].casefold() not in NOT_NAMES:
            found.append(EntityMention(value, "place"))
    return tuple(found)
