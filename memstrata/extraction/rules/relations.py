"""Relation rules: the people (and pets) in the user's life, by name ("my manager Sarah")."""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate, EntityMention, EntityType, ProfileSlot
from ..lexicon import END, I_AM, I_OR_WE, MY_OR_OUR, NAME, PETS, REL, RELATIONS, is_name
from ..render import month_day
from .clause import Clause, candidate, clean_value

_NEW = r"(?:new |current )?"
"""A relative said to be new ("my new manager is Karen") is still that relative."""
_REL_NAMED = re.compile(rf"{MY_OR_OUR} {_NEW}{REL}(?:'s)? name is (?P<v>{NAME}){END}", re.I)
_REL_IS = re.compile(rf"{MY_OR_OUR} {_NEW}{REL} is (?:called |named )?(?P<v>{NAME}){END}", re.I)
_REL_IS_A_NAMED = re.compile(rf"{MY_OR_OUR} {REL} is (?:a|an) [\w\- ]+? (?:named|called) (?P<v>{NAME}){END}", re.I)
_REL_APPOSITION = re.compile(rf"{MY_OR_OUR} {_NEW}{REL},? (?P<v>{NAME})(?P<rest>,?.*)$", re.I)
_REL_INVERSE = re.compile(rf"^(?P<v>{NAME}) is (?:my|our) {_NEW}{REL}{END}", re.I)
_REL_MARRIED = re.compile(rf"{I_AM} married to (?P<v>{NAME}){END}", re.I)
_REL_HAVE_NAMED = re.compile(
    rf"{I_OR_WE}(?: have|'ve got| got| have got) (?:a|an|one) {_NEW}{REL} (?:named|called) (?P<v>{NAME}){END}", re.I
)
_REL_HAVE_NEW = re.compile(
    rf"{I_OR_WE}(?: have|'ve got| got| have got) (?:a|an) new {REL}(?:,| now,|:| -) (?:named |called )?"
    rf"(?P<v>{NAME}){END}",
    re.I,
)
"""'I have a new manager, Tom': a relative introduced as new, named after a pause."""
_REL_GROUP = re.compile(
    rf"{MY_OR_OUR} (?P<rel>kids|children|sons|daughters|cats|dogs|parents) are (?:called |named )?"
    rf"(?P<v>{NAME}(?:(?:,| and) {NAME})+)",
    re.I,
)
_REL_BIRTHDAY = re.compile(rf"{MY_OR_OUR} {REL}(?:'s)? birthday is (?:on )?(?P<v>.+?)$", re.I)

_NAMED_RULES = (
    (_REL_NAMED, 0.9),
    (_REL_IS, 0.9),
    (_REL_IS_A_NAMED, 0.9),
    (_REL_INVERSE, 0.9),
    (_REL_HAVE_NAMED, 0.9),
    (_REL_HAVE_NEW, 0.85),
    (_REL_MARRIED, 0.9),
    (_REL_APPOSITION, 0.85),
)
"""Tried in order; the first match whose value is a name wins. "married to" has no relation word."""


def relation_rules(ctx: Clause) -> list[Candidate]:
    """A relative's birthday, a named group ("my kids are ..."), or one named relative."""
    match = _REL_BIRTHDAY.search(ctx.clause)
    if match:
        return _relative_birthday(ctx, match)
    match = _REL_GROUP.search(ctx.clause)
    if match:
        return [_group(ctx, match)]
    for pattern, confidence in _NAMED_RULES:
        match = pattern.search(ctx.clause)
        if match and is_name(match.group("v")):
            name = clean_value(match.group("v"))
            if pattern is _REL_MARRIED:
                return [_relation(ctx, "spouse", name, f"{ctx.subject} is married to {name}", confidence)]
            rel_word = match.group("rel").casefold()
            return [_relation(ctx, rel_word, name, f"{ctx.subject}'s {rel_word} is {name}", confidence)]
    return []


def _relative_birthday(ctx: Clause, match: re.Match[str]) -> list[Candidate]:
    value = month_day(match.group("v"), ctx.at)
    if value is None:
        return []
    rel_word = match.group("rel").casefold()
    return [
        candidate(
            ctx,
            kind=MemoryKind.FACT,
            category="relation",
            content=f"{ctx.subject}'s {rel_word}'s birthday is on {value}",
            attribute=f"birthday:{RELATIONS.get(rel_word, rel_word)}",
            value=value,
            confidence=0.85,
        )
    ]


def _group(ctx: Clause, match: re.Match[str]) -> Candidate:
    value = clean_value(match.group("v"))
    rel_word = match.group("rel").casefold()
    rel = {"kids": "children"}.get(rel_word, rel_word)
    return candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="relation",
        content=f"{ctx.subject}'s {rel_word} are {value}",
        attribute=f"relation:{rel}",
        value=value,
        entities=tuple(EntityMention(n.strip(), "person") for n in re.split(r",| and ", value) if n.strip()),
        confidence=0.8,
    )


def _relation(ctx: Clause, rel_word: str, name: str, content: str, confidence: float) -> Candidate:
    rel = RELATIONS.get(rel_word.casefold(), rel_word.casefold().replace(" ", "_"))
    entity_type: EntityType = "other" if rel in PETS else "person"
    return candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="relation",
        content=content,
        attribute=f"relation:{rel}",
        value=name,
        entities=(EntityMention(name, entity_type),),
        profile=ProfileSlot("relation", rel, name),
        confidence=confidence,
    )
