"""Word overlap between a reference fact and an extracted memory (pure; used to score extraction
on text the project did not write, where no attribute labels exist).

Words are lower-cased, stripped of punctuation and of a plural/tense "s"/"ed"/"ing" ending, and number
words become digits ("nine" and "9" are the same word); stopwords carry no content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_STOPWORDS = frozenset(
    """a an the and or but of to in on at for with from by about as is are was were be been being am do does did
    have has had i me my mine we us our you your he him his she her they them their it its this that these those
    there here then than so very just really also too not no yes some any all each every one ones up out over
    into onto off again now still new recently lately currently already user users user's assistant what which
    who whom when where why how can could would should will shall may might must s t ll ve re d m""".split()
)
_NUMBERS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
}
_WORD = re.compile(r"[a-z0-9]+(?:[.:,][0-9]+)*")


def stem(word: str) -> str:
    """A crude English stem: enough to make "attends"/"attended"/"attending" one word."""
    word = _NUMBERS.get(word, word)
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Content words of `text`, stemmed, in order (stopwords dropped; "25,000" stays one word)."""
    low = text.casefold().replace("'s", "").replace("$", " ")
    return [stem(token.replace(",", "")) for token in _WORD.findall(low) if token not in _STOPWORDS]


def coverage(reference: str, memory: str, *, ignore: Iterable[str] = ()) -> float:
    """Share of `reference`'s content words found in `memory` (1.0 when `reference` has none left)."""
    skip = {stem(word.casefold()) for word in ignore}
    wanted = {word for word in words(reference) if word not in skip}
    if not wanted:
        return 1.0
    return len(wanted & set(words(memory))) / len(wanted)


def contains_answer(answer: str, memory: str) -> bool:
    """True when every content word of a short `answer` occurs in `memory`."""
    wanted = set(words(answer))
    return bool(wanted) and wanted <= set(words(memory))
