"""Project rules: what the user is working on, building, learning or training for ("I'm working on a
project called Nebula", "I'm building a budgeting app", "I've been learning Rust", "training for a
half marathon").

A named project ("called Nebula", "Nebula, my side project") is also an entity. A one-off chore
("I'm writing an email") is not a project: the object must be something that lasts.
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate, EntityMention
from ..dates import find_dates
from ..lexicon import CAP
from ..render import absolute_dates, third_person
from .clause import Clause, candidate, clean_value

_LASTING = (
    r"project|app|application|startup|game|book|novel|memoir|website|site|tool|library|framework|thesis|"
    r"dissertation|podcast|company|business|newsletter|blog|platform|plugin|extension|bot|album|ep|film|movie|"
    r"documentary|course|house|garden|portfolio|channel|marathon|half[- ]marathon|triathlon|exam|certification|"
    r"degree|wedding|renovation|research|paper|product|service|campaign|studio|shop|store|charity|nonprofit"
)
_DOING = (
    r"working on|building|developing|writing|designing|launching|starting|planning|organi[sz]ing|preparing for|"
    r"training for|studying for|coding|making|creating|running|leading|renovating|recording|producing"
)
_PROGRESSIVE = r"(?:^|(?<=[\s,;:]))(?:i'm|i am|i've been|i have been|we're|we are|we've been)"
_QUOTED_OR_CAP = rf"(?:{CAP}(?: {CAP}){{0,3}}|\"_+\"|'_+')"
_NAMED = re.compile(
    rf"{_PROGRESSIVE} (?:(?:currently|still|now|also|really|actually) )*(?:(?:{_DOING})|[^,.;!?]{{0,30}}? (?:on|with)) "
    rf"(?:(?:a|an|my|our|the|this) )(?:[\w\-]+ ){{0,3}}?(?:{_LASTING})s?,? (?:called|named|titled|dubbed|codenamed) "
    rf"(?P<v>{_QUOTED_OR_CAP})"
    rf"|{_PROGRESSIVE} (?:(?:currently|still|now|also) )*(?:working on|building|developing) (?P<w>{_QUOTED_OR_CAP}),"
    rf"|\bmy (?:[\w\-]+ ){{0,2}}?(?:{_LASTING}),? (?:is )?(?:called|named|titled) (?P<x>{_QUOTED_OR_CAP})",
    re.I,
)
_UNNAMED = re.compile(
    rf"{_PROGRESSIVE} (?:(?:currently|still|now|also|really|actually) )*(?P<doing>{_DOING}) "
    rf"(?P<v>(?:a|an|my|our|the) (?:[\w\-]+ ){{0,3}}?(?:{_LASTING})s?\b[^,.;!?]*)",
    re.I,
)
_LEARNING = re.compile(
    rf"{_PROGRESSIVE} (?:(?:currently|still|now|also|really|slowly|finally) )*(?:learning|studying|taking up|"
    r"getting into|practi[cs]ing) (?P<v>(?:to [a-z]+|how to [a-z]+|[A-Z][\w+#]*|[a-z]+)(?: [\w+#\-]+){0,4}?)"
    r"(?=$|[,.;!?]| (?:and|but|because|since|for|at|on|with|every|these|this|lately|now|right now|again)\b)",
    re.I,
)
_NOT_OBJECTS = re.compile(r"^(?:it|this|that|them|stuff|things|something|anything|a lot|more|hard|on)\b", re.I)


def project_rules(ctx: Clause) -> list[Candidate]:
    """A named project, else an unnamed lasting one, else something the user is learning."""
    low = ctx.clause.casefold()
    if not any(hint in low for hint in ("i'm", "i am", "been", "we're", "we are", "my ")):
        return []
    named = _NAMED.search(ctx.clause)
    if named:
        group = next(g for g in ("v", "w", "x") if named.group(g))
        start, end = named.span(group)
        name = clean_value(ctx.original[start:end])
        content = third_person(ctx.original[named.start() : end], ctx.name)
        return [_project(ctx, content, name, (EntityMention(name, "project"),))]
    for pattern in (_UNNAMED, _LEARNING):
        match = pattern.search(ctx.clause)
        if match and not _NOT_OBJECTS.match(match.group("v")):
            value = clean_value(ctx.original[match.start("v") : match.end("v")])
            text = ctx.original[match.start() :]
            content = third_person(absolute_dates(text, find_dates(text, ctx.at, prefer="future")), ctx.name)
            return [_project(ctx, content, value, ())]
    return []


def _project(ctx: Clause, content: str, value: str, entities: tuple[EntityMention, ...]) -> Candidate:
    return candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="identity",
        content=content,
        attribute="project",
        value=value,
        entities=entities,
        confidence=0.75,
    )
