"""What the PostgreSQL store indexes for keyword search, and the per-user BM25 statistics it keeps.

A memory's row carries its terms (`keyword_terms`), their weighted frequencies and its length, all
computed in Python by `memstrata.core.keyword_index` and bound as parameters: no SQL expression reads
the memory's text to index it. `row_terms` and `search_terms` are the store's only two calls into the
term functions, so a transformation of the terms (keyed hashing) wraps both.

Search reads the same terms from `keyword_postings` (since migration 11): one narrow row per (user,
term, memory) with the term's weighted frequency and the memory's length, under a primary key
(user_id, term, memory_id) that also holds both, so ranking a term reads one contiguous range of one
index and never a memory's ~2 kB row. A save keeps the postings in step inside `memstrata_save`
(sql_functions.SAVE, migration 13); `postings_statements` does it for deletes.

The statistics BM25 needs are kept per user, in the write transaction: `keyword_totals` (memories,
tokens) and `keyword_documents` (memories holding each term). `statistics_change` (core.keyword_statistics,
shared with the SQLite store) computes what one write adds and removes; `statistics_statements` apply it
for deletes, and `memstrata_save` computes and applies the same change for saves, in SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...core.keyword_index import KeywordTerms, lookup_terms, memory_terms
from ...core.keyword_statistics import StatisticsChange
from ...core.text import query_terms
from ...models import MemoryRecord


def row_terms(user_id: str, record: MemoryRecord) -> KeywordTerms:
    """The terms `record` is indexed under."""
    return memory_terms(user_id, record)


def search_terms(user_id: str, query: str) -> list[str]:
    """The terms a query looks up: its distinct non-stopword words (`core.text.query_terms`, as in
    the SQLite store), each as `lookup_terms` writes it."""
    return lookup_terms(query_terms(query))


def row_values(terms: KeywordTerms) -> list[Any]:
    """The bind values of (keyword_terms, keyword_frequencies, keyword_length)."""
    ordered = sorted(terms.frequencies)
    return [ordered, [terms.frequencies[t] for t in ordered], terms.length]


VALUES_ROWS = 1000
"""Rows per multi-row INSERT (at most 5 000 bind parameters; PostgreSQL allows 65 535)."""


def _values(rows: int, width: int) -> str:
    """`VALUES (%s, ...), ...`: `rows` rows of `width` parameters (text built from constants only)."""
    row = "(" + ", ".join(["%s"] * width) + ")"
    return "VALUES " + ", ".join([row] * rows)


def _inserts(head: str, tail: str, rows: list[tuple[Any, ...]]) -> list[tuple[str, list[Any]]]:
    """Multi-row `head VALUES ... tail` statements for `rows`, `VALUES_ROWS` at a time, in order.

    A multi-row VALUES insert whose rows share one `user_id` is routed by Citus to that user's shard
    like any single-row statement. The `INSERT ... SELECT FROM unnest(...)` form used before was
    planned on the coordinator (results computed there, then copied into the shard), and Citus commits
    every transaction holding such a copy with two-phase commit, even for one shard."""
    return [
        (f"{head} {_values(len(chunk), len(chunk[0]))} {tail}", [v for row in chunk for v in row])
        for chunk in (rows[i : i + VALUES_ROWS] for i in range(0, len(rows), VALUES_ROWS))
    ]


ADD_DOCUMENTS = "INSERT INTO keyword_documents (user_id, term, documents)"
ADD_DOCUMENTS_TAIL = (
    "ON CONFLICT (user_id, term) DO UPDATE SET documents = keyword_documents.documents + EXCLUDED.documents"
)
"""Rows: (user_id, term, change), terms in order, so concurrent writes lock them in one order."""

DROP_UNUSED = "DELETE FROM keyword_documents WHERE user_id = %s AND term = ANY(%s) AND documents <= 0"
"""Params: user_id, terms whose count fell."""

ADD_TOTALS = (
    "INSERT INTO keyword_totals (user_id, documents, tokens) VALUES (%s, %s, %s) "
    "ON CONFLICT (user_id) DO UPDATE SET documents = keyword_totals.documents + EXCLUDED.documents, "
    "tokens = keyword_totals.tokens + EXCLUDED.tokens"
)
"""Params: user_id, memories added, tokens added (negative: removed)."""


def statistics_statements(user_id: str, change: StatisticsChange) -> list[tuple[str, list[Any]]]:
    """The statements applying `change` to `user_id`'s statistics (none when nothing changed)."""
    statements: list[tuple[str, list[Any]]] = []
    if change.documents:
        terms = sorted(change.documents)
        statements += _inserts(ADD_DOCUMENTS, ADD_DOCUMENTS_TAIL, [(user_id, t, change.documents[t]) for t in terms])
        fell = [t for t in terms if change.documents[t] < 0]
        if fell:
            statements.append((DROP_UNUSED, [user_id, fell]))
    if change.memories or change.tokens:
        statements.append((ADD_TOTALS, [user_id, change.memories, change.tokens]))
    return statements


DROP_POSTINGS = (
    "DELETE FROM keyword_postings p USING unnest(%s::text[], %s::text[]) AS d(term, memory_id) "
    "WHERE p.user_id = %s AND p.term = d.term AND p.memory_id = d.memory_id"
)
"""Params: terms, memory ids (pairwise), user_id. One primary-key probe per posting removed."""

ADD_POSTINGS = "INSERT INTO keyword_postings (user_id, term, memory_id, frequency, length)"
ADD_POSTINGS_TAIL = (
    "ON CONFLICT (user_id, term, memory_id) DO UPDATE SET frequency = EXCLUDED.frequency, length = EXCLUDED.length"
)
"""Rows: (user_id, term, memory id, frequency, length). An upsert, as before multi-row inserts, though the
old postings of a rewritten memory are deleted first (so it normally only inserts)."""


def postings_statements(
    user_id: str,
    removed: Iterable[tuple[str, Sequence[str]]],
    added: Iterable[tuple[str, KeywordTerms]],
) -> list[tuple[str, list[Any]]]:
    """The statements replacing the postings of the memories `removed` ((id, stored terms)) by those of
    `added` ((id, terms)): the old ones deleted first, so a memory written again keeps only its new terms."""
    statements: list[tuple[str, list[Any]]] = []
    old = [(term, id_) for id_, terms in removed for term in terms]
    if old:
        statements.append((DROP_POSTINGS, [[t for t, _ in old], [i for _, i in old], user_id]))
    new = [
        (user_id, term, id_, f, terms.length) for id_, terms in added for term, f in sorted(terms.frequencies.items())
    ]
    return statements + _inserts(ADD_POSTINGS, ADD_POSTINGS_TAIL, new)
