"""Preference rules: likes and dislikes, favorites, diet, habits, and (via `instructions`) standing requests.

`preference_rules` tries its patterns in a fixed order and keeps the first that yields a candidate,
so a clause gives at most one preference.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..base import Candidate
from ..diet import food_groups
from ..lexicon import ADVERBS, CO_SUBJECT, LOWER, wordset
from ..render import third_person
from ..skip import blocked_object, sarcastic, unresolved_referent
from .clause import Clause, clean_value
from .instructions import (
    CONTACT_ORDER,
    CONTACT_TIME,
    INSTRUCTION,
    KEEP_IT,
    STANDING_ORDER,
    STANDING_WANT,
    WHEN_YOU,
    contact_order,
    contact_time,
    instruction,
    keep_it,
    standing_order,
    standing_want,
    when_you,
)
from .topics import preference, preferred_object, topic, topic_preference

_LIKE_VERBS = {
    "love": 1,
    "adore": 1,
    "like": 1,
    "enjoy": 1,
    "prefer": 1,
    "hate": -1,
    "dislike": -1,
    "detest": -1,
    "despise": -1,
    "loathe": -1,
    "can't stand": -1,
    "cannot stand": -1,
    "can't bear": -1,
    "don't like": -1,
    "do not like": -1,
    "don't enjoy": -1,
    "don't love": -1,
    "really don't like": -1,
    "no longer like": -1,
    "no longer love": -1,
    "no longer enjoy": -1,
    "used to like": -1,
    "used to love": -1,
    "used to enjoy": -1,
    "used to be into": -1,
}
_LIKE = re.compile(
    rf"(?:^|(?<=[\s,;:]))i (?:(?:{ADVERBS}|kind of|kinda|sort of|tend to|do) )*"
    rf"(?P<verb>{'|'.join(sorted(map(re.escape, _LIKE_VERBS), key=len, reverse=True))})s? (?P<v>.+)$",
    re.I,
)
_FAN = re.compile(
    r"(?:^(?:i'm |i am )?|(?<=[\s,;:])(?:i'm|i am) )(?P<neg>not )?(?:really |such )?(?:a |much of a )?"
    r"(?:big |huge |massive )?fan of (?P<v>.+)$",
    re.I,
)
_INTO = re.compile(
    rf"(?:^|(?<=[\s,;:]))(?:i'm|i am) (?:(?:{ADVERBS}|so|super|kind of|kinda) )*(?P<neg>not |no longer )?"
    r"(?:really |that |super |so |very )?(?:into|obsessed with|crazy about|passionate about|hooked on|addicted to) "
    r"(?P<v>.+)$",
    re.I,
)
_KIND_OF_PERSON = re.compile(
    rf"(?:^|(?<=[\s,;:]))(?:i'm|i am) (?:(?:{ADVERBS}) )*(?P<neg>not |no longer |never been )?(?:really |much of |"
    r"a big |a huge |a total |such )?(?:a|an) (?:big |huge |total )?(?P<v>[a-z][a-z\-]+(?: [a-z\-]+)?) "
    r"(?:person|people person|guy|girl|lover|addict|nerd|geek|junkie|snob|fanatic)\b",
    re.I,
)
_WOULD_RATHER = re.compile(r"(?:^|(?<=[\s,;:]))i(?:'d| would) (?:rather|prefer) (?P<v>.+)$", re.I)
_OVER_FOR_ME = re.compile(r"^(?P<v>[\w\- ]{2,30}) over (?P<w>[\w\- ]{2,30}) for me\b", re.I)
_HABIT = re.compile(
    rf"(?:^|(?<=[\s,;:]))i (?P<adv>usually|always|never|normally|typically|generally) "
    rf"(?P<verb>[{LOWER}]+)(?P<rest>.*)$",
    re.I,
)
_FAVORITE = re.compile(
    r"\bmy (?:new )?(?:all-time )?favou?rite (?P<what>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<v>[^,.;!?]+)"
    r"|^(?:my )?(?:new|current) (?:all-time )?favou?rite (?P<what2>[a-z]+(?: [a-z]+)?) ?(?::|=|is|-) ?"
    r"(?P<v2>[^,.;!?]+)",
    re.I,
)
"""'My favorite show is X', and the chat shorthand 'New favorite show: X'."""
_FAVORITE_INVERSE = re.compile(
    r"^(?P<v>[\w\- ]{2,40}?) (?:is|are) (?:my|definitely my|probably my) (?:all-time )?favou?rite "
    r"(?P<what>[a-z]+(?: [a-z]+)?)\b",
    re.I,
)
_DIET = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:i'm|i am|i've been|i have been) (?:a |an )?(?:strict )?"
    r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|gluten[- ]free|dairy[- ]free|lactose[- ]free|keto|paleo|"
    r"plant[- ]based|halal|kosher|low[- ]carb|sugar[- ]free|teetotal|sober)\b",
    re.I,
)
_NO_EAT = re.compile(
    r"(?:^|(?<=[\s,;:]))i (?:don't|do not|never|can't|cannot) (?:eat|drink) "
    r"(?P<v>[\w\- ]+?)(?=$|[,.;!]| anymore| at all)",
    re.I,
)
_EAT_AGAIN = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:i|we)(?:'ve| have)? (?:just |recently |finally )?(?:started|begun|began|restarted|"
    r"gone back to|went back to) eating (?P<v>[a-z]+(?: [a-z]+)?)(?P<again> again)?\b"
    r"|(?:^|(?<=[\s,;:]))(?:i'm|i am|we're|we are) (?:back to )?eating (?P<w>[a-z]+(?: [a-z]+)?)"
    r"(?= again| now| these days| nowadays)"
    r"|(?:^|(?<=[\s,;:]))(?:i|we) (?:do )?eat (?P<x>[a-z]+(?: [a-z]+)?) (?=again|now|these days|nowadays)",
    re.I,
)
"""What the user eats again or now ("I started eating meat again", "I eat fish these days"): a food group
eaten, the stance that ends a diet leaving it out (`diet.stances`)."""
_NOT_HABITS = wordset(
    """said say meant mean asked ask told tell thought think knew know understood understand forget forgot
    wondered wonder get got do did have had am feel felt feels wish hope try tried want wanted"""
)

_NO_OBJECT = re.compile(
    r"^(?:better|best|more|most|less|least|a lot|so much|too|to help|helping|to chat|chatting|talking to you|"
    r"hearing from you|our chats|these chats)$",
    re.I,
)
Builder = Callable[[Clause, re.Match[str]], Candidate | None]


def preference_rules(ctx: Clause) -> list[Candidate]:
    """The first preference the clause states, in `_ORDER`."""
    for pattern, builder in _ORDER:
        match = pattern.search(ctx.clause)
        if match:
            found = builder(ctx, match)
            if found is not None:
                return [found]
    return []


def _favorite(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    what = (match.group("what") or match.group("what2")).casefold()
    value = clean_value(match.group("v") or match.group("v2"))
    if what.split()[0] in ("part", "thing", "bit", "one", "answer", "example") or blocked_object(value):
        return None
    if _ONE_OF.search(ctx.clause[: match.start()]):  # "One of my favorite authors is X": one of many
        return preference(ctx, f"One of {ctx.subject}'s favorite {what} is {value}", attribute="likes", value=value)
    attribute = f"preference:favorite_{what.replace(' ', '_')}"
    return preference(ctx, f"{ctx.subject}'s favorite {what} is {value}", attribute=attribute, value=value)


_ONE_OF = re.compile(r"\b(?:one|some|a few|two|three) of\s*$", re.I)


def _diet(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    value = match.group("v").casefold()
    return preference(ctx, f"{ctx.subject} is {value}", attribute="diet", value=value)


def _no_eat(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    value = clean_value(match.group("v"))
    content = third_person(ctx.original[match.start() :], ctx.name)
    return preference(ctx, content, attribute="diet", value=f"no {value}", confidence=0.8)


def _eat_again(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    words = (match.group("v") or match.group("w") or match.group("x")).casefold().split()
    named = [i for i, word in enumerate(words) if food_groups(word)]
    if not named:
        return None  # "I started eating healthier": no food named
    value = " ".join(words[: named[-1] + 1])  # "red meat", "fish" (of "fish lol")
    said = ctx.clause[match.start() : match.end() + 20]
    when = "again" if re.search(r"\b(?:again|back|restarted)\b", said, re.I) else "now"
    return preference(ctx, f"{ctx.subject} eats {value} {when}", attribute="diet", value=value, confidence=0.8)


def _would_rather(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    whole = match.group("v")
    if blocked_object(whole) or whole.casefold().startswith(("not ", "to know", "to ask")):
        return None
    found = topic(whole, 1)
    if found:
        return topic_preference(ctx, found)
    value = preferred_object(whole)
    return preference(ctx, f"{ctx.subject} would rather {value}", attribute="likes", value=value, confidence=0.75)


def _over_for_me(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    value, other = clean_value(match.group("v")), clean_value(match.group("w"))
    return preference(
        ctx, f"{ctx.subject} prefers {value} over {other}", attribute="likes", value=value, confidence=0.75
    )


def _fan(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    if blocked_object(match.group("v")) or sarcastic(ctx.original):
        return None
    value = preferred_object(match.group("v"))
    if not value:
        return None
    polarity = -1 if match.group("neg") else 1
    verb = "is not a fan of" if polarity < 0 else "is a fan of"
    return preference(ctx, f"{ctx.subject} {verb} {value}", attribute="likes", value=value, polarity=polarity)


def _into(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    whole = match.group("v")
    if blocked_object(whole) or sarcastic(ctx.original):
        return None
    value = preferred_object(whole)
    if not value or unresolved_referent(value) or len(value.split()) > 8:
        return None
    polarity = -1 if match.group("neg") else 1
    verb = "is not into" if polarity < 0 else "is into"
    return preference(ctx, f"{ctx.subject} {verb} {value}", attribute="likes", value=value, polarity=polarity)


def _kind_of_person(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """ "I'm a coffee person", "I'm not a morning person (anymore)": a liking for the thing named."""
    value = match.group("v").casefold()
    if sarcastic(ctx.original) or value in ("people", "good", "bad", "nice", "different", "real", "new", "better"):
        return None
    polarity = -1 if match.group("neg") else 1
    content = third_person(ctx.original[match.start() : match.end()], ctx.name)
    return preference(ctx, content, attribute="likes", value=value, polarity=polarity)


def _like(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    if re.search(
        r"\b(?:which|what|whichever|whatever|how much)\b(?:\s+[\w'-]+){0,2}\s*$", ctx.clause[: match.start()], re.I
    ):
        return None  # "see which one I like better": an embedded question, not a taste
    verb = match.group("verb").casefold()
    whole = match.group("v")
    if blocked_object(whole) or sarcastic(ctx.original):
        return None
    polarity = _LIKE_VERBS[verb]
    found = topic(whole, polarity)
    if found:
        return topic_preference(ctx, found)
    value = preferred_object(whole)
    if not value or unresolved_referent(value) or len(value.split()) > 10 or _NO_OBJECT.match(value):
        return None
    value = re.sub(r"^(?:it )?when\b", "when", value)
    content = third_person(ctx.original[match.start() : match.start("v")] + value, ctx.name)
    if verb == "prefer":
        return preference(ctx, content, attribute="likes", value=value, confidence=0.8)
    return preference(ctx, content, attribute="likes", value=value, polarity=polarity)


def _habit(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    rest = match.group("rest").strip()
    if match.group("verb").casefold() in _NOT_HABITS or rest.startswith("'") or blocked_object(rest):
        return None
    together = CO_SUBJECT.search(ctx.original[: match.start()])  # "Rachel and I usually meet for coffee"
    text = ctx.original[together.start() if together else match.start() :]
    found = None if together else topic(text, -1 if match.group("adv").casefold() == "never" else 1)
    if found:
        return topic_preference(ctx, found)
    return preference(
        ctx,
        third_person(text, ctx.name),
        attribute="habit",
        value=preferred_object(match.group("rest")),
        confidence=0.7,
    )


_ORDER: tuple[tuple[re.Pattern[str], Builder], ...] = (
    (KEEP_IT, keep_it),
    (CONTACT_TIME, contact_time),
    (CONTACT_ORDER, contact_order),
    (_FAVORITE, _favorite),
    (_FAVORITE_INVERSE, _favorite),
    (_DIET, _diet),
    (_NO_EAT, _no_eat),
    (_EAT_AGAIN, _eat_again),
    (INSTRUCTION, instruction),
    (STANDING_ORDER, standing_order),
    (WHEN_YOU, when_you),
    (_WOULD_RATHER, _would_rather),
    (STANDING_WANT, standing_want),
    (_OVER_FOR_ME, _over_for_me),
    (_FAN, _fan),
    (_INTO, _into),
    (_KIND_OF_PERSON, _kind_of_person),
    (_LIKE, _like),
    (_HABIT, _habit),
)
"""Most specific first: a clause matching several patterns takes the first that yields a candidate."""
