"""Update rules: a value that no longer holds ("I no longer work at Acme", "I used to live in Madrid",
"I quit my job at Initech", "I'm not vegan anymore").

Each yields a candidate for the slot and the old value with `polarity=-1`, so that resolution can retire
the stored value even when the message names no new one. The new value, when given ("..., I joined
Globex", "... but now I'm in Porto"), comes from the ordinary identity and preference rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...models import MemoryKind
from ..base import Candidate, EntityMention, EntityType
from ..lexicon import END, I_AM, I_OR_WE, ORG, PLACE
from ..render import third_person
from .clause import Clause, candidate, clean_value

_NO_LONGER = r"(?:no longer|don't|do not|dont|didn't|did not|never)"
_ANYMORE = r"(?: (?:any ?more|now|these days|at all))?"


@dataclass(frozen=True, slots=True)
class _Former:
    """A slot whose old value a pattern names: the wording of "no longer" for it, and its entity type."""

    attribute: str
    patterns: tuple[re.Pattern[str], ...]
    template: str
    entity: EntityType


_FORMER = (
    _Former(
        "employer",
        (
            re.compile(rf"{I_OR_WE} (?:{_NO_LONGER}|used to) work (?:at|for|with) (?P<v>{ORG}){_ANYMORE}{END}", re.I),
            re.compile(
                rf"{I_AM} (?:no longer|not) (?:working |employed )?(?:at|with|for) (?P<v>{ORG}) any ?more", re.I
            ),
            re.compile(
                rf"{I_OR_WE} (?:just |recently |finally |officially )?(?:left|quit|resigned from|got laid off from"
                rf"|was laid off from|got fired from|was let go from) (?:my (?:job|position|role) (?:at|with) )?"
                rf"(?P<v>(?-i:[A-Z])[\w&'\-]*(?: (?-i:[A-Z])[\w&'\-]*)*){END}",
                re.I,
            ),
        ),
        "{subject} no longer works at {value}",
        "organization",
    ),
    _Former(
        "location",
        (
            re.compile(rf"{I_OR_WE} (?:{_NO_LONGER}|used to) live in (?P<v>{PLACE}){_ANYMORE}{END}", re.I),
            re.compile(rf"{I_AM} (?:no longer|not) (?:living |based )?in (?P<v>{PLACE}) any ?more", re.I),
            re.compile(
                rf"{I_OR_WE} (?:just |recently |finally )?moved (?:away )?(?:out of|from) (?P<v>{PLACE}){END}", re.I
            ),
        ),
        "{subject} no longer lives in {value}",
        "place",
    ),
)
_FORMER_DIET = re.compile(
    rf"{I_AM} (?:no longer|not) (?:a |an )?(?P<v>vegetarian|vegan|pescatarian|pescetarian) any ?more"
    rf"|{I_AM} no longer (?:a |an )?(?P<w>vegetarian|vegan|pescatarian|pescetarian)\b"
    rf"|{I_OR_WE} used to be (?:a |an )?(?P<x>vegetarian|vegan|pescatarian|pescetarian)\b",
    re.I,
)


def update_rules(ctx: Clause) -> list[Candidate]:
    """A candidate with polarity -1 for each slot value the clause says no longer holds."""
    found = []
    for former in _FORMER:
        for pattern in former.patterns:
            match = pattern.search(ctx.clause)
            if match and not match.group("v").casefold().startswith(("the ", "a ", "an ", "home")):
                found.append(_former_value(ctx, former, clean_value(match.group("v"))))
                break
    if not found:
        found.extend(_quit_job(ctx))
    diet = _FORMER_DIET.search(ctx.clause)
    if diet:
        value = (diet.group("v") or diet.group("w") or diet.group("x")).casefold()
        found.append(
            candidate(
                ctx,
                kind=MemoryKind.PREFERENCE,
                category="preference",
                content=f"{ctx.subject} is no longer {value}",
                attribute="diet",
                value=value,
                polarity=-1,
            )
        )
    return found


_QUIT_JOB = re.compile(
    rf"{I_OR_WE} (?:just |recently |finally |officially )?(?:left|quit|resigned from|lost) (?:my|our) "
    rf"(?:\w+ )?(?:job|position|role)(?: (?:at|with) (?P<v>{ORG}))?{END}",
    re.I,
)


def _quit_job(ctx: Clause) -> list[Candidate]:
    """ "I quit my job (at the bank)": the employer slot no longer holds (its value named or not)."""
    match = _QUIT_JOB.search(ctx.clause)
    if not match:
        return []
    value = clean_value(match.group("v")) if match.group("v") else None
    return [
        candidate(
            ctx,
            kind=MemoryKind.FACT,
            category="identity",
            content=third_person(ctx.original[match.start() : match.end()], ctx.name),
            attribute="employer",
            value=value,
            polarity=-1,
            confidence=0.8,
        )
    ]


def _former_value(ctx: Clause, former: _Former, value: str) -> Candidate:
    return candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="identity",
        content=former.template.format(subject=ctx.subject, value=value),
        attribute=former.attribute,
        value=value,
        polarity=-1,
        entities=(EntityMention(value, former.entity),),
        confidence=0.85,
    )
