"""What the user eats: food groups, what a diet leaves out, and the stances a diet or taste implies (pure).

A diet label is a stance towards food groups ("vegetarian" = no meat, no fish), and eating a food is a
stance towards its group ("I eat steak again" = eats meat). Resolution compares these stances: eating
meat again contradicts being vegetarian, while not eating pork says nothing against eating meat.

`topics` is looser: the things a slot is about at all, for deciding whether a memory may be retired by
a statement that contradicts it ("loves steak" and "is vegetarian" are both about meat; "loves tea" is
not).
"""

from __future__ import annotations

import re

from .lexicon import wordset

FOOD_GROUPS: dict[str, frozenset[str]] = {
    "meat": wordset(
        """meat meats steak steaks beef pork bacon ham lamb veal mutton venison chicken turkey duck sausage
        sausages burger burgers hamburger hamburgers salami pepperoni ribs brisket meatballs"""
    ),
    "fish": wordset(
        """fish seafood salmon tuna cod trout sardines anchovies shrimp prawns sushi shellfish oysters mussels
        crab lobster"""
    ),
    "dairy": wordset("dairy milk cheese butter yogurt yoghurt cream"),
    "eggs": wordset("egg eggs"),
}
"""Each group with the words that name it or one of its foods."""

DIET_EXCLUDES: dict[str, tuple[str, ...]] = {
    "vegetarian": ("meat", "fish"),
    "vegan": ("meat", "fish", "dairy", "eggs"),
    "plant based": ("meat", "fish", "dairy", "eggs"),
    "pescatarian": ("meat",),
    "pescetarian": ("meat",),
    "dairy free": ("dairy",),
    "lactose free": ("dairy",),
}
"""The food groups a diet label leaves out."""

_NEGATED = re.compile(r"^(?:no|not|non|never)\s+")
_WORD = re.compile(r"[a-z]+")

Stance = tuple[str, int]
"""A thing and the sign of the user's stance towards it (+1 eats/likes it, -1 does not)."""


def food_groups(text: str) -> frozenset[str]:
    """The food groups `text` names, by the group or one of its foods ("steak and eggs" -> meat, eggs)."""
    words = set(_WORD.findall(text.casefold()))
    return frozenset(group for group, names in FOOD_GROUPS.items() if words & names)


def label_of(value: str) -> str:
    """A diet label in its lexicon form ("plant-based" -> "plant based")."""
    return " ".join(value.casefold().replace("-", " ").split())


def stances(value: str | None, polarity: int, *, eating: bool) -> frozenset[Stance]:
    """The stances an affinity slot's value states.

    The object itself with its sign ("no coffee" -> coffee, -1); a diet label that holds adds the groups
    it leaves out, each -1; and when the slot says what the user eats (`eating`: a diet or a habit, not a
    taste), eating a food is eating its group ("beef" -> meat, +1). A food not eaten says nothing about
    its group ("no pork" is not "no meat"), and a diet no longer followed says nothing about its foods.
    """
    if not value:
        return frozenset()
    stripped = _NEGATED.sub("", value)
    sign = -polarity if stripped != value else polarity
    found = {(stripped, sign)}
    if sign > 0:
        found |= {(group, -1) for group in DIET_EXCLUDES.get(label_of(stripped), ())}
        if eating:
            found |= {(group, 1) for group in food_groups(stripped)}
    return frozenset(found)


def contradicts(new: frozenset[Stance], old: frozenset[Stance]) -> bool:
    """True when one of the stances is held in `new` with the opposite sign of `old`."""
    return any((thing, -sign) in old for thing, sign in new)


def topics(text: str | None) -> frozenset[str]:
    """What a value or sentence is about in the terms of this module: the food groups it names and the
    groups a diet label in it leaves out (empty when it is about none)."""
    if not text:
        return frozenset()
    folded = label_of(text)
    found = set(food_groups(folded))
    for label, groups in DIET_EXCLUDES.items():
        if re.search(rf"\b{label}\b", folded):
            found |= set(groups)
    return frozenset(found)


__all__ = ["DIET_EXCLUDES", "FOOD_GROUPS", "contradicts", "food_groups", "label_of", "stances", "topics"]
