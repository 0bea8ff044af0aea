"""Tokenizing and stemming for keyword search and lightweight text logic (pure)."""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
    out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this those through
    to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves s t d ll m re ve o y just also""".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; inner apostrophes kept)."""
    return [w.replace("\u2019", "'") for w in _WORD.findall(text.casefold())]


def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def content_terms(text: str) -> list[str]:
    """Stemmed tokens without stopwords: the terms keyword search matches on."""
    kept = [w.split("'")[0] for w in words(text) if w not in STOPWORDS]
    return [stem(w) for w in kept if w]


def unique_content_terms(text: str) -> list[str]:
    """`content_terms` without repeats, in first-seen order."""
    return list(dict.fromkeys(content_terms(text)))


MAX_QUERY_TERMS = 32
"""Keyword search looks for at most this many words of a query (the first distinct ones): a pasted
32 KB document of 8,000 distinct words made one PostgreSQL search take 13-30 s (the OR-ed tsquery
and its ranking grow with every word), while the vector side already reads the whole query."""
MAX_TERM_CHARS = 64
"""Longer "words" (hashes, base64, runs of letters) are left out: no full-text index keeps them."""


def query_terms(text: str) -> list[str]:
    """The words keyword search looks for (any of them may match): distinct, lower-cased, no stopwords,
    at most MAX_QUERY_TERMS of at most MAX_TERM_CHARS characters. Both stores use this rule; each
    stems the words with its own full-text engine."""
    kept = (w for w in dict.fromkeys(words(text)) if w not in STOPWORDS and len(w) <= MAX_TERM_CHARS)
    return list(itertools.islice(kept, MAX_QUERY_TERMS))
