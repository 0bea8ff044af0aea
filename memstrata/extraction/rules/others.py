"""Facts about other people the user names ("Sarah moved to the London office.", "My brother Tom
just joined Stripe", "Priya got engaged last week").

Each is an "entity" candidate whose `subject` is the person's lower-cased name, worded as said (in
the third person) and listing that person first among its entities, so the memory can be linked to them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...models import MemoryKind
from ..base import Candidate, EntityMention, EntityType
from ..dates import find_dates, guess_tense
from ..lexicon import CAP, LOWER, NAME, NOT_NAMES, OCCUPATIONS, REL, is_name
from ..render import absolute_dates, third_person
from .clause import Clause, candidate, clean_value

_VERBS: tuple[tuple[str, str, int, EntityType | None], ...] = (
    (r"(?:just )?(?:moved|relocated|transferred|is moving|is relocating) to", "location", 1, "place"),
    (r"(?:lives|is living|is based|is now living|now lives) in", "location", 1, "place"),
    (
        r"(?:works|is working|now works) (?:at|for)|joined|started (?:working )?at|got a job at|is now at",
        "employer",
        1,
        "organization",
    ),
    (r"(?:left|quit|resigned from|was laid off from|got laid off from)", "employer", -1, "organization"),
    (rf"is (?:a|an|now a|now an) (?:[\w\-]+ ){{0,3}}?(?:{OCCUPATIONS})\b", "job_title", 1, None),
    (
        r"got (?:promoted|engaged|married|divorced|a new job|a puppy|a dog|into)|is (?:pregnant|engaged|retiring|"
        r"getting married|expecting)|had (?:a baby|her baby|his baby|their baby|twins)|graduated|retired|"
        r"passed away|broke up with|became|started (?:a new job|school|college|university|a company)|"
        r"is (?:allergic to|vegan|vegetarian)|turned \d{1,3}|loves|hates|is obsessed with",
        "fact",
        1,
        None,
    ),
)
_RELATION = REL.replace("(?P<rel>", "(?:")
_SUBJECT = re.compile(
    rf"^(?:(?:my|our) {_RELATION},? )?(?P<name>{NAME})(?:,? (?:my|our) (?:\w+ ){{0,2}}?{_RELATION},?)?"
    rf"(?: (?:from|in|on|at) (?:the )?[{LOWER}\-]+(?: team| department| dept)?)? "
    rf"(?:(?:just|recently|finally|also|now|actually|officially) )*(?:has |'s |have )?"
    rf"(?P<verb>{'|'.join(f'(?:{v[0]})' for v in _VERBS)})\b(?P<rest>.*)$",
    re.I,
)
_NOT_SUBJECTS = NOT_NAMES | frozenset(
    "everyone everybody someone somebody nobody anyone people he she they it we i you".split()
)
_CAPS = re.compile(rf"{CAP}(?: (?:of |de |la )?{CAP})*")


def other_people_rules(ctx: Clause) -> list[Candidate]:
    """A fact about a named person other than the user, when the clause opens with that person."""
    match = _SUBJECT.search(ctx.clause)
    if not match:
        return []
    name = clean_value(match.group("name"))
    if not is_name(name) or name.split()[0].casefold() in _NOT_SUBJECTS:
        return []
    verb = match.group("verb")
    attribute, polarity, entity_type = next(
        (a, p, t) for pattern, a, p, t in _VERBS if re.fullmatch(pattern, verb, re.I)
    )
    rest = clean_value(match.group("rest"))
    value = rest if attribute in ("location", "employer") else clean_value(f"{verb} {rest}")
    if attribute in ("location", "employer") and not rest:
        return []
    text = ctx.original[match.start() :]
    mentions = find_dates(text, ctx.at, prefer=guess_tense(text))
    found = candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="entity",
        content=third_person(absolute_dates(text, mentions), ctx.name),
        attribute=attribute,
        value=value,
        polarity=polarity,
        event_time=mentions[0].start if mentions else None,
        entities=(EntityMention(name, "person"), *_named_in(rest, entity_type)),
        confidence=0.75,
    )
    return [replace(found, subject=name.casefold())]


def _named_in(rest: str, entity_type: EntityType | None) -> tuple[EntityMention, ...]:
    """Capitalized names in the object of a move or a job ("the London office" -> London, a place)."""
    if entity_type is None:
        return ()
    names = [m.group(0) for m in _CAPS.finditer(rest)]
    return tuple(EntityMention(n, entity_type) for n in names if is_name(n))
