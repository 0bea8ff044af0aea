"""Wording of stored memories: third-person sentences and absolute dates.

"I love my morning run" becomes "The user loves their morning run." (or "Ben loves ..."), and
"next Friday" becomes "on 17 May 2024", resolved against the time the message was said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from .dates import DateMention, find_dates
from .lexicon import ADVERBS, LOWER, wordset

# --- verbs ------------------------------------------------------------------------------------

_IRREGULAR_3RD = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_PAST_OR_MODAL = wordset(
    """can could will would shall should must might may went ran had got took made saw met came left began
    won lost bought sold flew drove wrote gave did quit became broke found spent was were said told
    thought knew felt kept sent paid put read set let hit cut hurt cost shut spread split built heard wore chose
    taught caught brought held sat stood understood slept swam sang rode drank ate fed led lent meant fought
    sought bent dealt dug struck threw grew drew blew forgot froze hid hung lit lay rang rose shook shot slid
    spoke spun stole stuck swore swept tore woke wept burnt learnt dreamt spelt spilt gonna wanna gotta"""
)
_NOT_ADVERBS = wordset("apply reply supply rely fly imply multiply comply ally bully rally tally")
"""Verbs ending in "-ly", which are conjugated; any other "-ly" word before the verb is an adverb."""


def _conjugate(verb: str) -> str:
    """The third-person singular of a first-person verb ("love" -> "loves"); past tenses, modals and an
    adverb the lists do not know ("I slowly formed ...") unchanged."""
    low = verb.casefold()
    stem = re.sub(r"^(?:re|un|over|under|mis|out|with)(?=[a-z]{3,})", "", low)
    past = low.endswith("ed") and not low.endswith("eed")
    adverb = low.endswith("ly") and low not in _NOT_ADVERBS
    if low in _PAST_OR_MODAL or stem in _PAST_OR_MODAL or past or adverb or low.endswith("n't"):
        return verb
    if low in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


# --- third person -----------------------------------------------------------------------------

_SUBJ, _POSS, _OBJ = "\x01", "\x02", "\x03"
_FIRST_TO_THIRD: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"\bI'm not\b|\bI am not\b", f"{_SUBJ} is not"),
        (r"\bI'm\b|\bI am\b", f"{_SUBJ} is"),
        (r"\bI've\b", f"{_SUBJ} has"),
        (r"\bI'd\b", f"{_SUBJ} would"),
        (r"\bI'll\b", f"{_SUBJ} will"),
        (rf"\bI((?:\s+(?:{ADVERBS}))*)\s+(?:don't|do not)\b", rf"{_SUBJ}\1 does not"),
        (rf"\bI((?:\s+(?:{ADVERBS}))*)\s+(?:haven't|have not)\b", rf"{_SUBJ}\1 has not"),
        (r"\b((?-i:[A-Z])[a-z]+|(?:my|our) [a-z]+) and I\b", rf"\1 and {_SUBJ}"),
        (r"\bwe're\b", f"{_SUBJ} and others are"),
        (r"\bwe've\b", f"{_SUBJ} and others have"),
        (r"\bwe'll\b", f"{_SUBJ} and others will"),
        (
            rf"\bI((?:\s+(?:{ADVERBS}))*)\s+([{LOWER}']+)",
            lambda m: f"{_SUBJ}{m.group(1)} {_conjugate(m.group(2))}",
        ),
        (r"\bI\b", _SUBJ),
        (r"\bwe\b", f"{_SUBJ} and others"),
        (r"\bus\b", f"{_OBJ} and others"),
        (r"\bmy\b|\bour\b|\bmine\b|\bours\b", _POSS),
        (r"\bmyself\b", "themselves"),
        (r"\bme\b(?!-)", _OBJ),  # not "me-time"
        (r"\byour\b", "the assistant's"),
        (r"\byou\b", "the assistant"),
    )
)
"""In order: the user's pronouns become placeholders, the assistant's become "the assistant"."""


def third_person(text: str, name: str | None = None) -> str:
    """Rewrite a first-person statement about the user in the third person.

    The first mention uses the name ("I love my morning run" -> "The user loves their morning run",
    or "Ben loves ..."); later possessives and objects become "their" / "them".
    """
    quoted = _QUOTED.findall(text)
    out = _QUOTED.sub(_QUOTE_MARK, text.strip())
    for pattern, replacement in _FIRST_TO_THIRD:
        out = pattern.sub(replacement, out)
    for title in quoted:
        out = out.replace(_QUOTE_MARK, title, 1)
    return sentence(_name_placeholders(out, name or "the user"))


_QUOTED = re.compile(r'"[^"]+"')
_QUOTE_MARK = "\x04"
"""A quoted title or phrase keeps its words ("How I Built This" stays as it is)."""


def _name_placeholders(text: str, subject: str) -> str:
    """Replace subject/possessive/object placeholders: the name first, pronouns after."""
    pieces = []
    named = False
    for char in text:
        if char == _SUBJ:
            pieces.append(subject)
            named = True
        elif char == _POSS:
            pieces.append("their" if named else f"{subject}'s")
            named = True
        elif char == _OBJ:
            pieces.append("them" if named else subject)
            named = True
        else:
            pieces.append(char)
    return "".join(pieces)


def third_person_object(text: str, name: str | None) -> str:
    """Pronouns inside a task body that follows the subject ("call my mom" -> "call their mom")."""
    text = re.sub(r"\bmy\b|\bour\b", "their", text, flags=re.I)
    text = re.sub(r"\bme\b|\bus\b", "them", text, flags=re.I)
    text = re.sub(r"\bmyself\b", "themselves", text, flags=re.I)
    text = re.sub(r"\bI\b", name or "the user", text)
    return without_end_punctuation(text.strip())


# --- sentences --------------------------------------------------------------------------------

_END_PUNCTUATION = re.compile(r"[.!?]+$")


def without_end_punctuation(text: str) -> str:
    """`text` without its closing ".", "!" or "?" run."""
    return _END_PUNCTUATION.sub("", text)


def sentence(text: str) -> str:
    """One tidy sentence: single spaces, a capital first letter, a full stop (empty stays empty)."""
    text = without_end_punctuation(" ".join(text.split()).strip(" ,;:-"))
    if not text:
        return text
    return text[0].upper() + text[1:] + "."


def article(noun: str) -> str:
    """The article for `noun`: "an" before a vowel letter, else "a"."""
    return "an" if noun[:1].casefold() in "aeiou" else "a"


# --- dates ------------------------------------------------------------------------------------


def render_date(mention: DateMention) -> str:
    """An absolute date at the mention's granularity ("14 May 2024", "the week of 13 May 2024", "2024")."""
    start = mention.start
    day = f"{start.day} {start:%B %Y}"
    if mention.granularity == "minute":
        return f"{day} at {start:%H:%M}"
    if mention.granularity == "week":
        return f"the week of {day}"
    if mention.granularity == "weekend":
        return f"the weekend of {day}"
    if mention.granularity == "month":
        return f"{start:%B %Y}"
    if mention.granularity == "year":
        return f"{start.year}"
    if mention.granularity == "season":
        return f"the {_SEASON_NAMES[start.month]} of {start.year}"
    return day


_SEASON_NAMES = {3: "spring", 6: "summer", 9: "fall", 12: "winter"}


def month_day(phrase: str, at: datetime) -> str | None:
    """The first day-precise date in `phrase` as "May 14" (resolved as of `at`); None when there is none."""
    mentions = find_dates(phrase, at)
    if not mentions or mentions[0].granularity not in ("day", "minute"):
        return None
    start = mentions[0].start
    return f"{start:%B} {start.day}"


_LEADING_PREPOSITION = re.compile(
    r"^(?P<prep>on|in|within|by|before|after|until|since|during|early|late|mid|end of|beginning of)\s+",
    re.IGNORECASE,
)
_PRECEDING_PREPOSITION = re.compile(
    r"\b(?:on|in|by|before|after|until|till|since|during|from|to|at|about|around|roughly|almost|nearly)\s*$",
    re.I,
)


def absolute_dates(text: str, mentions: Sequence[DateMention]) -> str:
    """`text` with each relative date phrase replaced by the absolute date it stands for."""
    pieces: list[str] = []
    cursor = 0
    for mention in mentions:
        start, end = mention.span
        before = text[cursor:start]
        inside_noun_phrase = re.search(r"\b(?:a|an|the|every|each|my|our|his|her|their|'s)\s*$", before, re.I)
        pieces.extend(
            [before, text[start:end] if inside_noun_phrase else _dated_phrase(text[start:end], before, mention)]
        )
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _dated_phrase(phrase: str, before: str, mention: DateMention) -> str:
    """The absolute date for `phrase`, with the preposition it keeps or needs ("on 14 May 2024")."""
    lead = _LEADING_PREPOSITION.match(phrase)
    keep = lead.group("prep").lower() if lead and lead.group("prep").lower() not in ("in", "within") else ""
    if keep:
        return f"{keep} {render_date(mention)}"
    if _PRECEDING_PREPOSITION.search(before):
        return render_date(mention)
    if mention.granularity in ("month", "year", "week", "season"):
        return f"in {render_date(mention)}"
    return f"on {render_date(mention)}"
