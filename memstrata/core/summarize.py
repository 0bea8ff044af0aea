"""Extractive summaries and salient terms (pure: no model, no I/O, deterministic).

The offline rolling summary keeps whole sentences, so names, numbers and dates survive verbatim.
Each kept sentence becomes one line stamped with who said it and the day it was said::

    Alice (2024-05-12): My manager Sarah wants the Q3 report by Friday.

Folding new turns into a previous summary rescores the previous lines together with the new
sentences and keeps the most salient ones within a bounded length, in chronological order.
Salience favours names, numbers, dates, preferences, plans and requests; greetings, thanks and
small talk score low; near-duplicates (same content words) are kept once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from .text import STOPWORDS, content_terms, stem, words

MAX_CHARS = 1000
"""Default bound of a rolling summary (about 250 tokens)."""
MAX_LINES = 10
MAX_SENTENCE_CHARS = 300
MIN_SALIENCE = 1.6
"""Sentences scoring below this (small talk, bare questions, acknowledgements) are never kept."""
ASSISTANT_WEIGHT = 0.7
"""Assistant sentences often echo the user; they win only when clearly more informative."""
PREVIOUS_WEIGHT = 0.85
"""Previous-summary lines compete with new sentences at this weight, so the summary moves on."""

_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|Jr|Sr|Prof|vs|etc|e\.g|i\.e|No|approx)\.$", re.IGNORECASE)
_LINE = re.compile(r"^(?P<who>[^()\n:]{1,60}?)(?: \((?P<day>\d{4}-\d{2}-\d{2})\))?: (?P<text>.+)$")
_CAPITALIZED = re.compile(r"\b(?:[A-Z][a-z]+(?:[A-Z][a-z]+)*|[A-Z]{2,}\d*|[A-Z]\d+)\b")
_NUMBER = re.compile(r"\d+")


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DATE_WORDS = _wordset(
    """january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday today tomorrow
    yesterday tonight weekend week month year morning afternoon evening noon midnight"""
)
_STRONG_CUES = re.compile(
    r"\b(?:prefer\w*|love[sd]?|hate[sd]?|enjoy\w*|dislike[sd]?|favou?rite|allergic|remind\w*|remember|"
    r"deadline|due|appointment|birthday|decid\w*|plan(?:s|ned|ning)?|always|never)\b",
    re.IGNORECASE,
)
_WEAK_CUES = re.compile(
    r"\b(?:like[sd]?|want\w*|need\w*|will|going to|meeting|moved?|work(?:s|ed|ing)?|live[sd]?|my|our|"
    r"started|finished|bought|visited|adopted|married|born|name)\b",
    re.IGNORECASE,
)
_FILLER = _wordset(
    """hi hello hey thanks thank you ok okay sure great cool nice yes yeah yep no nope bye goodbye welcome
    good morning evening night awesome wow lol haha glad happy sounds perfect alright right got it see
    course absolutely definitely totally please noted fine understood done agreed"""
)
TOPIC_STOPWORDS = _wordset(
    """like know think really yeah good great thanks thank okay sure want need get got going one would could
    make made time lot much well see say said also today tomorrow yesterday hi hello hey please right thing
    things way day days something anything everything nothing maybe just still even back let lets sounds
    glad happy nice cool awesome love amazing feel felt look looking tell told help sorry yes yep hope
    definitely totally actually pretty kind sort stuff wow lol haha"""
)


_COMMON_OPENERS = _wordset(
    """also anyway actually well so then now oh ah um hmm please let just sometimes maybe honestly
    yesterday today tomorrow last next this that these those there here it its what when where who"""
)


class TurnLike(Protocol):
    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


@dataclass(frozen=True, slots=True)
class _Candidate:
    line: str
    text: str
    score: float
    order: tuple[int, int, int]
    terms: frozenset[str]


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` (a light splitter: ., !, ? or a newline; common abbreviations kept whole)."""
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    merged: list[str] = []
    for piece in pieces:
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return [" ".join(s.split()) for s in merged]


def _is_filler(sentence: str) -> bool:
    tokens = words(sentence)
    return len(tokens) <= 6 and all(t in _FILLER or t in STOPWORDS for t in tokens)


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?\n\"'(:"


def _is_proper(text: str, start: int, word: str, *, strict: bool = False) -> bool:
    """A capitalized word that is a name, not just the first word of a sentence (or "I").

    A sentence-initial word counts unless it is a common opener; with `strict`, it never counts.
    """
    lowered = word.casefold()
    if word == "I" or lowered in _FILLER:
        return False
    if strict:
        return not _sentence_initial(text, start)
    return not _sentence_initial(text, start) or (
        lowered not in STOPWORDS and lowered not in TOPIC_STOPWORDS and lowered not in _COMMON_OPENERS
    )


def salience(sentence: str) -> float:
    """How much a sentence is worth keeping: names, numbers, dates, preferences/plans, content words."""
    tokens = words(sentence)
    if not tokens or _is_filler(sentence):
        return 0.0
    names = sum(1 for m in _CAPITALIZED.finditer(sentence) if _is_proper(sentence, m.start(), m.group()))
    numbers = len(_NUMBER.findall(sentence))
    dates = sum(1 for t in tokens if t in _DATE_WORDS)
    cues = min(len(_STRONG_CUES.findall(sentence)), 2) + 0.5 * min(len(_WEAK_CUES.findall(sentence)), 2)
    terms = len(set(content_terms(sentence)))
    score = 1.0 * names + 1.0 * numbers + 1.0 * dates + 1.0 * cues + 0.25 * min(terms, 12)
    if sentence.rstrip().endswith("?"):
        score *= 0.6
    if len(tokens) < 4:
        score *= 0.5
    return round(score, 6)


def _shorten(sentence: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;: ") + "…"


def _who(turn: TurnLike) -> str:
    speaker = getattr(turn, "speaker", None)
    return str(speaker) if speaker else turn.role.capitalize()


def _day(turn: TurnLike) -> str | None:
    at = getattr(turn, "at", None)
    return at.isoformat()[:10] if isinstance(at, date) else None


def format_line(who: str, day: str | None, sentence: str) -> str:
    return f"{who} ({day}): {sentence}" if day else f"{who}: {sentence}"


def _previous_candidates(previous: str) -> list[_Candidate]:
    found: list[_Candidate] = []
    for line_no, raw in enumerate(line.strip() for line in previous.splitlines()):
        if not raw:
            continue
        match = _LINE.match(raw)
        units = [raw] if match else split_sentences(raw)
        for unit_no, unit in enumerate(units):
            text = match.group("text") if match else unit
            found.append(
                _Candidate(
                    line=unit,
                    text=text,
                    score=salience(text) * PREVIOUS_WEIGHT,
                    order=(0, line_no, unit_no),
                    terms=frozenset(content_terms(text)),
                )
            )
    return found


def _turn_candidates(turns: Sequence[TurnLike]) -> list[_Candidate]:
    found: list[_Candidate] = []
    for turn_no, turn in enumerate(turns):
        who, day = _who(turn), _day(turn)
        weight = ASSISTANT_WEIGHT if turn.role == "assistant" else 1.0
        for sentence_no, sentence in enumerate(split_sentences(turn.content)):
            text = _shorten(sentence)
            line = format_line(who, day, text)
            score = salience(text) * weight
            terms = frozenset(content_terms(text))
            found.append(_Candidate(line=line, text=text, score=score, order=(1, turn_no, sentence_no), terms=terms))
    return found


def _redundant(candidate: _Candidate, kept: Iterable[_Candidate]) -> bool:
    """Mostly the same content words as a kept line, and no number that line lacks."""
    if not candidate.terms:
        return False
    numbers = {t for t in candidate.terms if any(ch.isdigit() for ch in t)}
    for other in kept:
        union = candidate.terms | other.terms
        if union and len(candidate.terms & other.terms) / len(union) >= 0.6 and numbers <= other.terms:
            return True
    return False


def summarize_extractive(
    previous: str | None, turns: Sequence[TurnLike], *, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES
) -> str:
    """Fold `turns` into `previous` (may be None/""): the most salient sentences of both, as dated lines
    in chronological order, at most `max_lines` lines and `max_chars` characters."""
    candidates = _previous_candidates(previous or "") + _turn_candidates(turns)
    ranked = sorted(
        (c for c in candidates if c.score >= MIN_SALIENCE),
        key=lambda c: (-c.score, -c.order[0], -c.order[1], c.order[2]),
    )
    kept: list[_Candidate] = []
    size = 0
    for candidate in ranked:
        if len(kept) >= max_lines:
            break
        extra = len(candidate.line) + (1 if kept else 0)
        if size + extra > max_chars or _redundant(candidate, kept):
            continue
        kept.append(candidate)
        size += extra
    if not kept:
        return (previous or "").strip()
    return "\n".join(c.line for c in sorted(kept, key=lambda c: c.order))


def salient_terms(texts: Iterable[str], k: int = 3, *, exclude: Iterable[str] = ()) -> list[str]:
    """The `k` most salient words of `texts` (topics): frequent content words, proper nouns favoured,
    chat filler and `exclude` left out; each shown in its most common surface form."""
    excluded = {stem(w) for text in exclude for w in words(text)}
    counts: dict[str, float] = {}
    surfaces: dict[str, Counter[str]] = {}
    first_seen: dict[str, int] = {}
    position = 0
    for text in texts:
        for match in re.finditer(r"[^\W\d_][\w'\-]*", text):
            raw = match.group()
            lowered = raw.casefold()
            if len(lowered) < 3 or lowered in STOPWORDS or lowered in TOPIC_STOPWORDS or "'" in lowered:
                continue
            term = stem(lowered)
            if term in excluded or term in TOPIC_STOPWORDS:
                continue
            proper = raw[0].isupper() and _is_proper(text, match.start(), raw, strict=True)
            counts[term] = counts.get(term, 0.0) + (1.5 if proper else 1.0)
            surfaces.setdefault(term, Counter())[raw if proper else lowered] += 1
            first_seen.setdefault(term, position)
            position += 1
    ranked = sorted(counts, key=lambda t: (-counts[t], first_seen[t]))
    return [surfaces[t].most_common(1)[0][0] for t in ranked[:k]]


__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "format_line",
    "salience",
    "salient_terms",
    "split_sentences",
    "summarize_extractive",
]
