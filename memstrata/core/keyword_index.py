"""The terms a memory is found under by keyword search, computed in Python (pure).

Both stores rank keyword matches with BM25 over the same terms. SQLite computes them inside FTS5
(`tokenize='porter unicode61'`); PostgreSQL stores what `memory_terms` returns, so no SQL
expression ever reads a memory's text to index it (the text may be encrypted there). A query
looks its words up through `lookup_terms`, which maps words to terms with the same functions, so a
transformation of the terms (e.g. keyed hashing) applied to both keeps them matching.

* **Tokens** follow FTS5's `unicode61` tokenizer: runs of letters, digits, private-use characters,
  Latin diacritics and the symbols SQLite's Unicode 6.1 tables do not know (recent emoji), lower-cased;
  a Latin letter loses its one diacritic (`é` → `e`). Checked against SQLite on the standard
  library's docstrings (tests/core/test_keyword_index.py) and on all 48,098 texts of the LoCoMo dev
  set and 30 LongMemEval dev questions (no difference); other scripts' combining marks and letters
  newer than Unicode 6.1 may still be split differently.
* **Stemming** is FTS5's `porter` (`core.porter`), applied to tokens of 3 to 64 bytes; shorter and
  longer tokens are kept as they are.
* **Terms** are the stemmed tokens, plus, for two tokens joined by one apostrophe (`Caroline's`),
  the pair `"carolin s"`: a query word with an apostrophe is an FTS5 phrase of two tokens, found
  where they stand next to each other. FTS5 also matches the pair across other separators
  ("caroline s"); those occurrences are the one case where the two stores count differently.
* **Frequencies** are per term, summed over the searched columns with their weights
  (`COLUMN_WEIGHTS`: content 1.0, context 0.5, the written-out date 1.0), as FTS5's `bm25()` weighs
  them. The **length** of a memory is its number of tokens in every column of the FTS5 table,
  the user id included (what `bm25()` divides by the average).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from ..models import MemoryRecord
from .porter import porter_stem
from .retrieval import KEYWORD_COLUMN_WEIGHTS, date_text

COLUMN_WEIGHTS = KEYWORD_COLUMN_WEIGHTS
"""Weights of the searched columns (content, context, written-out date), as `bm25()` is called."""

_APOSTROPHES = frozenset("'\u2019\u02bc")


@dataclass(frozen=True, slots=True)
class KeywordTerms:
    """What one memory is indexed under: weighted frequency per term, and its length in tokens."""

    frequencies: dict[str, float]
    length: int


_SQLITE_TOKEN_SYMBOLS = (
    "\u2065-\u2069\u2072\u2073\u208f\u209d-\u209f\u20ba-\u20cf\u218a-\u218f\u23f4-\u23ff\u2427-\u243f"
    "\u244b-\u245f\u2700\u2b4d-\u2b4f\u2b5a-\u2bff\U0001f02c-\U0001f02f\U0001f094-\U0001f09f\U0001f0af"
    "\U0001f0b0\U0001f0bf\U0001f0c0\U0001f0d0\U0001f0e0-\U0001f0ff\U0001f10d-\U0001f10f\U0001f12f"
    "\U0001f16c-\U0001f16f\U0001f19b-\U0001f1e5\U0001f203-\U0001f20f\U0001f23b-\U0001f23f"
    "\U0001f249-\U0001f24f\U0001f252-\U0001f2ff\U0001f321-\U0001f32f\U0001f336\U0001f37d-\U0001f37f"
    "\U0001f394-\U0001f39f\U0001f3c5\U0001f3cb-\U0001f3df\U0001f3f1-\U0001f3ff\U0001f43f\U0001f441"
    "\U0001f4f8\U0001f4fd-\U0001f4ff\U0001f53e-\U0001f53f\U0001f544-\U0001f54f\U0001f568-\U0001f5fa"
    "\U0001f641-\U0001f644\U0001f650-\U0001f67f\U0001f6c6-\U0001f6ff\U0001f774-\U0001fbef\U0001fbfa-\U0001fbff"
)
"""Symbols (emoji among them) newer than the Unicode 6.1 tables of SQLite's unicode61 tokenizer, which
therefore keeps them as tokens (each one is a word there, and counts in a memory's length)."""

_LATIN_DIACRITICS = "\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d\u032e\u0330\u0331"
"""The combining diacritics unicode61 keeps inside tokens, and then drops."""

_TOKEN = re.compile(f"(?:[^\\W_]|[\ue000-\uf8ff\U000f0000-\U0010fffd{_LATIN_DIACRITICS}{_SQLITE_TOKEN_SYMBOLS}])+")
"""Runs of token characters as unicode61 reads them: letters and digits, private use, the diacritics
above, and the symbols its tables do not know."""


def _fold(token: str) -> str:
    """unicode61's folding: lower case; a Latin letter's single diacritic and U+0300-U+036F dropped."""
    lowered = token.lower()
    if lowered.isascii():
        return lowered
    out = []
    for char in lowered.replace("\u03c2", "\u03c3"):  # final sigma folds to sigma
        if "\u0300" <= char <= "\u036f":
            continue
        parts = unicodedata.normalize("NFD", char)
        out.append(parts[0] if len(parts) == 2 and parts[0].isascii() and unicodedata.combining(parts[1]) else char)
    return "".join(out)


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(stemmed token, start, end) for every token of `text`, in order."""
    spans = []
    for match in _TOKEN.finditer(text):
        folded = _fold(match.group())
        if folded:
            spans.append((porter_stem(folded), match.start(), match.end()))
    return spans


def tokens(text: str) -> list[str]:
    """The stemmed tokens of `text`, in order (FTS5 `porter unicode61`)."""
    return [token for token, _, _ in _spans(text)]


_ASCII_TOKEN = re.compile("[a-z0-9]+")
"""`_TOKEN` on lower-cased ASCII text, where nothing needs folding (the fast path of `_line_terms`)."""
_ASCII_PAIR = re.compile("(?<![a-z0-9])([a-z0-9]+)'(?=([a-z0-9]+))")
"""Two `_ASCII_TOKEN`s joined by one apostrophe, as (left, right); the right one is not consumed, so it
is also the left one of the next pair ("a'b'c": a-b, b-c)."""


def _column_lines(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...], int]]:
    """`_line_terms` of each line of one column: a line break separates tokens and is no apostrophe, so
    no token or pair spans two lines. Lines are remembered (`_line_terms`): a conversation turn is indexed
    as a memory's content and again as a line of the next two turns' context."""
    return [_line_terms(text)] if "\n" not in text else [_line_terms(line) for line in text.split("\n")]


@lru_cache(maxsize=8192)
def _line_terms(text: str) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(the stemmed tokens of one line of text, its apostrophe pairs, its token count)."""
    if text.isascii():  # most text: one lower() for the whole line, no folding per token
        lowered = text.lower()
        words = _ASCII_TOKEN.findall(lowered)
        stems = tuple(map(porter_stem, words))
        if "'" not in lowered:
            return stems, (), len(words)
        pairs = tuple(f"{porter_stem(left)} {porter_stem(right)}" for left, right in _ASCII_PAIR.findall(lowered))
        return stems, pairs, len(words)
    spans = _spans(text)
    pairs = tuple(
        f"{left} {right}"
        for (left, _, left_end), (right, right_start, _) in zip(spans, spans[1:], strict=False)
        if right_start - left_end == 1 and text[left_end] in _APOSTROPHES
    )
    return tuple(token for token, _, _ in spans), pairs, len(spans)


_HALVES = tuple(round(weight * 2) for weight in COLUMN_WEIGHTS)
"""Each column's weight in halves: a term's weighted frequency is its count in halves times 0.5."""
if any(halves / 2 != weight for halves, weight in zip(_HALVES, COLUMN_WEIGHTS, strict=True)):
    raise ValueError(f"keyword column weights must be multiples of 0.5, got {COLUMN_WEIGHTS}")


def column_terms(user_id: str, columns: Sequence[str]) -> KeywordTerms:
    """The terms of a row whose searched columns hold `columns` (weighted by `COLUMN_WEIGHTS`), for
    a user named `user_id` (its tokens count towards the length, as in the FTS5 table)."""
    length = sum(count for _, _, count in _column_lines(user_id))  # remembered line by line, as any column
    parts: list[tuple[str, ...]] = []
    for text, halves in zip(columns, _HALVES, strict=True):
        lines = _column_lines(text)
        # A column's terms are its lines' tokens, then their pairs, each occurrence counted once per half
        # of the column's weight.
        column = [line[0] for line in lines] + [line[1] for line in lines]
        parts.extend(column * halves)
        length += sum(line[2] for line in lines)
    # Counted in C, then weighted: the weights are multiples of 0.5, so n halves times 0.5 is exactly
    # the sum of each column's weight times its count, and the terms keep their first-seen order.
    counts = Counter(chain.from_iterable(parts))
    return KeywordTerms({term: n * 0.5 for term, n in counts.items()}, length)


def memory_terms(user_id: str, record: MemoryRecord) -> KeywordTerms:
    """What `record` of `user_id` is indexed under: its content, context and creation date."""
    return column_terms(user_id, (record.content, record.context, date_text(record.created_at)))


def lookup_terms(words: Iterable[str]) -> list[str]:
    """The term each query word is looked up as (a word of two tokens: the pair, as `memory_terms`
    writes it). Words without a token are left out; repeated terms are kept, as FTS5 ranks each
    query phrase on its own."""
    terms = []
    for word in words:
        stems = tokens(word)
        if stems:
            terms.append(" ".join(stems))
    return terms
