"""What a sentence shows the speaker has or likes, though its subject is not the speaker.

- A possession named in passing, inside any sentence, questions and requests included: "Let's start with
  my 2018 Honda Civic", "can my Fitbit Charge 3 track swimming?". Only a noun phrase a model year or two
  proper names make specific (a make and a model) counts: "my car" or "my Kindle" says too little, or
  is said of something borrowed as often as owned.
- A thing said to be one of the speaker's own likes ("Playing video games and watching movies are my
  main hobbies"), or to make the speaker happy ("Dancing makes me so happy").
- A cleft that puts the speaker's activity last ("Building a strong brand for my store is something I'm
  always working on"): stored in the plain order ("... is always working on building a strong brand ...").
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import STATEMENT, Candidate
from ..disclosure import specific_words
from ..lexicon import RELATIONS
from ..render import third_person
from ..skip import leans_on_context
from .clause import Clause, candidate, clean_value

_OWNED = re.compile(
    r"\b(?-i:my) (?P<np>(?:19|20)\d\d (?:[\w-]+ ){0,2}[\w-]+"
    r"|(?-i:[A-Z])[\w-]+(?: (?:(?-i:[A-Z])[\w-]*|\d+\w*)){1,3})(?P<after>\W*$|[^\w\s]| [a-z]+)?",
    re.IGNORECASE,
)
_NOT_A_THING = re.compile(
    r"^(?:(?:19|20)\d\d (?:(?:was|is|were|and|to|in|of|for|had|has|went|\w+ed)\b|\w+ (?:was|is|were)\b))"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
_AFTER_A_NAME = frozenset(
    "for to and or but is was has had needs keeps in on at with that which because since so".split()
)


def owned_things(text: str) -> list[str]:
    """The specific things `text` calls "my ...": "2018 Honda Civic", "Fitbit Charge 3", "Honda Civic"
    (a year or a model number, or proper names that end the noun phrase: "my Starbucks Rewards app" or
    "my Rocky Mountains trip" name something else)."""
    found = []
    for match in _OWNED.finditer(text):
        phrase = match.group("np")
        if _NOT_A_THING.search(phrase) or phrase.split()[0].casefold() in RELATIONS:
            continue
        after = (match.group("after") or "").strip()
        numbered = any(character.isdigit() for character in phrase)  # a year or a model number
        if not numbered and after.isalpha() and after not in _AFTER_A_NAME:
            continue  # the proper names qualify a common noun: "my Starbucks Rewards app"
        if phrase not in found:
            found.append(phrase)
    return found


def possession_candidates(text: str, ctx: Clause) -> list[Candidate]:
    """One "has a ..." fact per specific thing the text calls the speaker's own."""
    return [
        candidate(
            ctx,
            kind=MemoryKind.FACT,
            category="identity",
            content=f"{ctx.subject} has {_article(thing)} {thing}.",
            attribute=STATEMENT,
            value=f"I have {_article(thing)} {thing}",
            confidence=0.6,
        )
        for thing in owned_things(text)
    ]


def owned(candidate: Candidate) -> str:
    """The thing a possession candidate names ("2018 Honda Civic")."""
    return (candidate.value or "").split(" ", 3)[-1]


def _article(phrase: str) -> str:
    return "an" if phrase[:1].casefold() in "aeiou" or phrase[:2] in ("18", "80") else "a"


_NOT_A_POINTER = r"(?!(?:it|this|that|these|those|they|he|she|which|what|there|you|all|both|so|such)\b)"
"""A phrase that does not start with a pronoun or a word pointing back into the conversation."""

_MINE = re.compile(
    r"^(?P<x>" + _NOT_A_POINTER + r"[\w' ,&-]{3,60}?)"
    r" (?:is|are|was|were|has been|have been|remains?) (?:(?:one|some|two|three) of )?(?:definitely |probably )?"
    r"(?:my|our) (?:[\w-]+ )?(?P<n>hobby|hobbies|passion|passions|go-to|guilty pleasure|happy place|jam|specialty"
    r"|comfort food)\b"
    r"|^(?P<y>" + _NOT_A_POINTER + r"[\w' ,&-]{3,60}?)"
    r" (?:really |always |just |truly )?(?:makes|make|keeps|keep|brings|bring|gives|give) me"
    r" (?:so |such |really |a lot of |great |real )?(?:happy|joy|calm|peace|alive|sane|relaxed)\b",
    re.IGNORECASE,
)


def _names_a_thing(phrase: str) -> bool:
    """A phrase that says what it is about by itself: specific words, no pronoun, nothing only the
    conversation resolves."""
    return bool(specific_words(phrase)) and not leans_on_context(phrase) and not _POINTERS.search(phrase)


_POINTERS = re.compile(r"\b(?:it|them|this|that)\b", re.IGNORECASE)


def liked_by_the_speaker(ctx: Clause) -> list[Candidate]:
    """ "X are my main hobbies", "X makes me so happy": a liking whose subject is the thing liked."""
    found = _MINE.match(ctx.clause)
    if found is None:
        return []
    thing = clean_value(ctx.original[: found.end("x") if found.group("x") else found.end("y")])
    if not _names_a_thing(thing):
        return []
    return [
        candidate(
            ctx,
            kind=MemoryKind.PREFERENCE,
            category="preference",
            content=third_person(ctx.original[: found.end()], ctx.name),
            attribute="likes",
            value=thing,
            confidence=0.6,
        )
    ]


_CLEFT = re.compile(
    r"^(?P<x>" + _NOT_A_POINTER + r"[\w' ,&-]{3,80}?)"
    r" (?:is|are) (?:something|what|one thing|a thing|the thing)(?: that)? (?P<who>i(?:'m| am|'ve| have)?)"
    r"(?P<rest>(?: (?:always|really|constantly|still|currently|usually|often))* (?P<verb>[a-z]+ing|[a-z]+)"
    r"(?: on| at| into| about| with| for)?)\W*$",
    re.IGNORECASE,
)


def clefted(ctx: Clause) -> list[Candidate]:
    """ "X is something I'm always working on" -> "<user> is always working on X"."""
    found = _CLEFT.match(ctx.clause)
    if found is None:
        return []
    thing = clean_value(ctx.original[: found.end("x")])
    if not _names_a_thing(thing):
        return []
    said = f"{ctx.original[found.start('who') : found.end('rest')]} {thing[:1].lower()}{thing[1:]}"
    return [
        candidate(
            ctx,
            kind=MemoryKind.FACT,
            category="identity",
            content=third_person(said, ctx.name),
            attribute=STATEMENT,
            value=clean_value(said),
            confidence=0.6,
        )
    ]
