"""The keyword terms computed in Python are the ones SQLite's FTS5 (`porter unicode61`) indexes.

The corpus is real text nobody here wrote: the docstrings of the standard library's modules, plus
a few lines naming the cases that matter (possessives, diacritics, emoji, long and short tokens).
"""

from __future__ import annotations

import importlib
import inspect
import sqlite3
from collections import Counter
from datetime import UTC, datetime

import pytest

from memstrata.core.keyword_index import COLUMN_WEIGHTS, column_terms, lookup_terms, memory_terms, tokens
from memstrata.core.porter import porter_stem
from memstrata.core.retrieval import date_text
from memstrata.models import MemoryKind, MemoryRecord, Scope

_MODULES = (
    "argparse",
    "asyncio",
    "collections",
    "csv",
    "datetime",
    "decimal",
    "email",
    "functools",
    "http.client",
    "inspect",
    "json",
    "logging",
    "pathlib",
    "random",
    "re",
    "sqlite3",
    "statistics",
    "string",
    "textwrap",
    "threading",
    "unittest",
    "urllib.parse",
    "zipfile",
    "calendar",
    "difflib",
    "heapq",
    "shutil",
    "tarfile",
)

_CASES = (
    "Caroline's dog isn't Melanie\u2019s; it's the neighbours' dog.",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 co\u00f6perate \u00c5ngstr\u00f6m \u00dcBER stra\u00dfe",
    "Trekking, trekked, technology, incredibly, responsibly, generalization, hopping, filing, agreed.",
    "We went hiking \U0001f9d8\u200d\u2640\ufe0f and it was great \U0001f914\U0001f3d6 \u2600 :)",
    "\u03a0\u0391\u039d\u0394\u0395\u039a\u03a4\u0397\u03a3 \u03c0\u03bf\u03bb\u03b9\u03c2 "
    "\u043c\u043e\u0441\u043a\u0432\u0430 \u6771\u4eac \u0939\u093f\u0928\u094d\u0926\u0940",
    "a an I x9 2023-05-08 3.14 " + "y" * 70 + " " + "abc" * 30,
)


def _corpus() -> list[str]:
    texts = list(_CASES)
    for name in _MODULES:
        module = importlib.import_module(name)
        members = [module] + [member for key, member in sorted(vars(module).items()) if not key.startswith("_")]
        for member in members:
            doc = (inspect.getdoc(member) or "") if callable(member) or member is module else ""
            texts.extend(paragraph for paragraph in doc.split("\n\n") if paragraph.strip())
    return list(dict.fromkeys(texts))


def _fts5_instances(rows: list[tuple[str, ...]], columns: tuple[str, ...]) -> dict[int, list[tuple[int, int, str]]]:
    """(column, offset, term) of every token FTS5 indexed, per row (numbered from 1)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(columns)}, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    marks = ", ".join("?" * (len(columns) + 1))
    conn.executemany(
        f"INSERT INTO t (rowid, {', '.join(columns)}) VALUES ({marks})",
        [(number, *row) for number, row in enumerate(rows, 1)],
    )
    found: dict[int, list[tuple[int, int, str]]] = {}
    for term, doc, column, offset in conn.execute("SELECT term, doc, col, offset FROM v"):
        found.setdefault(doc, []).append((columns.index(column), offset, term))
    return found


def test_tokens_are_fts5_porter_unicode61_tokens() -> None:
    texts = _corpus()
    assert len(texts) > 300
    found = _fts5_instances([(t,) for t in texts], ("x",))
    differing = [t for i, t in enumerate(texts, 1) if tokens(t) != [term for _, _, term in sorted(found.get(i, []))]]
    assert differing == []


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        pytest.param("technology", "technolog", id="logi-to-log"),
        pytest.param("incredibly", "incred", id="bli-to-ble"),
        pytest.param("trekking", "trek", id="any-double-consonant"),
        pytest.param("agreed", "agre", id="eed"),
        pytest.param("ponies", "poni", id="ies"),
        pytest.param("caresses", "caress", id="sses"),
        pytest.param("hopping", "hop", id="undouble"),
        pytest.param("filing", "file", id="cvc-adds-e"),
        pytest.param("as", "as", id="short-kept"),
        pytest.param("y" * 65, "y" * 65, id="long-kept"),
    ],
)
def test_porter_follows_fts5(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_weighted_frequencies_and_length_match_fts5() -> None:
    """Per row: each term's occurrences per column weighted by COLUMN_WEIGHTS, and the row's length
    in tokens over every column (the user id included), as FTS5's bm25() reads them."""
    texts = _corpus()
    rows = [
        ("user-7", texts[i], texts[-1 - i], date_text(datetime(2023, 5, 1 + i % 28, tzinfo=UTC))) for i in range(120)
    ]
    found = _fts5_instances(rows, ("user_id", "content", "context", "date_text"))
    for number, (user_id, *columns) in enumerate(rows, 1):
        expected: Counter[str] = Counter()
        for column, _, term in found[number]:
            if column:
                expected[term] += COLUMN_WEIGHTS[column - 1]
        terms = column_terms(user_id, columns)
        unigrams = {t: f for t, f in terms.frequencies.items() if " " not in t}
        assert unigrams == {t: f for t, f in expected.items() if f}, columns
        assert terms.length == len(found[number])


def test_two_tokens_joined_by_an_apostrophe_are_also_a_pair() -> None:
    terms = column_terms("alice", ("Caroline's dog met Caroline\u2019s cat", "Caroline s", ""))
    assert terms.frequencies["carolin s"] == 2.0  # the context's "Caroline s" is not a joined pair
    assert terms.frequencies["carolin"] == 2.5
    assert lookup_terms(["caroline's", "dogs", "the"]) == ["carolin s", "dog", "the"]


def test_ascii_fast_path_gives_the_general_tokenizer_s_terms() -> None:
    """ASCII text skips per-token folding (`_line_terms`' fast path) and lines are tokenized one by one:
    terms, pairs and token count are the general path's, on the corpus and on apostrophes everywhere."""
    from memstrata.core import keyword_index

    apostrophes = ["it's  o'clock'", "a'b'c", "'quoted' words", "X'Y Z'W", "ABC's DEF''s 42's"]
    apostrophes += ["rock'\n'n roll", "Caroline's\nMel's\n\nit's", "a\nb'\nc", "caf\u00e9's\nJo's"]  # line by line
    samples = [*(t for t in _corpus()[:300] if t.isascii()), *apostrophes]
    assert len(samples) > 200
    for text in samples:
        spans = keyword_index._spans(text)
        general = [t for t, _, _ in spans] + [
            f"{left} {right}"
            for (left, _, end), (right, start, _) in zip(spans, spans[1:], strict=False)
            if start - end == 1 and text[end] == "'"
        ]
        lines = keyword_index._column_lines(text)
        terms = [t for tokens, _, _ in lines for t in tokens] + [p for _, pairs, _ in lines for p in pairs]
        assert (terms, sum(count for _, _, count in lines)) == (general, len(spans)), text


def test_memory_terms_index_content_context_and_date() -> None:
    record = MemoryRecord(
        id="m1",
        scope=Scope("alice"),
        kind=MemoryKind.FACT,
        content="Moved to Berlin",
        context="Where do you live?",
        created_at=datetime(2023, 5, 8, tzinfo=UTC),
        updated_at=datetime(2023, 5, 8, tzinfo=UTC),
    )
    terms = memory_terms("alice", record)
    assert terms.frequencies == {
        "move": 1.0,
        "to": 1.0,
        "berlin": 1.0,
        "where": 0.5,
        "do": 0.5,
        "you": 0.5,
        "live": 0.5,
        "8": 1.0,
        "mai": 1.0,
        "2023": 1.0,
    }
    assert terms.length == 1 + 3 + 4 + 3


def test_lookup_terms_drop_words_without_tokens_and_keep_repeats() -> None:
    assert lookup_terms(["moving", "moves", "\u2600", ""]) == ["move", "move"]
