"""People a clause names ("lunch with Sarah", "met Tom", "Priya and I"), for linking memories to them."""

from __future__ import annotations

import re

from ..base import EntityMention
from ..lexicon import LANGUAGES, NAME, NATIONALITIES, REL, is_name

_PERSON_CUE = re.compile(
    r"\b(?:with|met|meet|meeting|saw|see|seeing|called|calling|call|texted|texting|emailed|messaged|told|tell|"
    r"asked|invited|thanked|hugged|dating|dated|married|helped|helping|visiting|visited|thanks to|"
    r"hung out with|hanging out with|caught up with|catching up with|lunch with|dinner with|coffee with)"
    rf" (?P<v>{NAME})"
    rf"|(?:^|(?<=[\s,;:]))(?P<w>{NAME}) and (?:i|me)\b|\bme and (?P<x>{NAME})"
    rf"|\b(?:my|our) {REL.replace('(?P<rel>', '(?:')},? (?P<y>{NAME})",
    re.I,
)
_NOT_PEOPLE = frozenset(
    """everyone everybody someone somebody nobody anyone people god jesus christmas easter thanksgiving
    zoom slack teams google facebook instagram twitter linkedin whatsapp netflix spotify youtube amazon uber
    chatgpt claude alexa siri""".split()
)
_PLACE_WORDS = frozenset("street st road avenue ave park city town lake river beach mountain airport station".split())


def people(clause: str) -> tuple[EntityMention, ...]:
    """Capitalized names the clause pairs with a social verb or preposition, as persons."""
    found: list[EntityMention] = []
    for match in _PERSON_CUE.finditer(clause):
        name = next((g for g in match.group("v", "w", "x", "y") if g), "").strip()
        words = [w.casefold() for w in name.split()]
        if not name or not is_name(name) or words[0] in _NOT_PEOPLE or words[-1] in _PLACE_WORDS:
            continue
        if words[0] in LANGUAGES or words[0] in NATIONALITIES:
            continue
        found.append(EntityMention(name, "person"))
    return tuple(found)


def merged(*groups: tuple[EntityMention, ...]) -> tuple[EntityMention, ...]:
    """The mentions of every group, in order, each name once (the first type given wins)."""
    seen: dict[str, EntityMention] = {}
    for group in groups:
        for mention in group:
            seen.setdefault(mention.name.casefold(), mention)
    return tuple(seen.values())
