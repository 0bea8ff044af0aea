"""Keyword search of the SQLite store: postings and per-user BM25 statistics (since migration 4).

A memory's terms are computed in Python by `core.keyword_index` (FTS5's `porter unicode61` tokens,
weighted per column), exactly as the PostgreSQL store computes them, and kept in three tables, all
written in the transaction of the memory write that changes them:

* `keyword_users` (user_key, user_id, documents, tokens): the user's integer key, how many memories the
  user has, and their tokens. The other two tables name the user by this key (migration 5), not by the
  user id repeated in every row: that made the postings' b-tree 1.6 times bigger and each write slower.
* `keyword_postings` (user_key, term, memory, frequency, length): one row per term of each memory
  (`memory` is the memories rowid), under a primary key that holds the whole row, so ranking a term
  reads one contiguous range of one b-tree and never a memory's row.
* `keyword_documents` (user_key, term, documents): how many of the user's memories hold each term.

So a user's ranking depends on that user's memories only: no other user's memories change a term's
IDF or the average length (FTS5's `bm25()` counts every row of the file). `core.bm25` has the formula;
`ranked_sql` sums it in SQL over the postings of the looked-up terms, with IDFs bound as parameters.

A user's row in `keyword_users` exists exactly while the user has memories indexed: it is deleted with
the user's last memory (and its key may then be given to a later user: no row holds it any more), and
`erase` deletes the user's rows of all three tables.

The old terms of a memory being rewritten or deleted are computed again from its stored text (content,
context, written-out date), with the same pure function that computed them when it was written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter

from ..core import bm25
from ..core.keyword_index import KeywordTerms, column_terms
from ..core.keyword_statistics import StatisticsChange, statistics_change

IndexedMemory = tuple[int, KeywordTerms]
"""(memories rowid, the terms it is indexed under)."""

SearchedText = tuple[str, str, str]
"""A memory's searched columns as the memories table holds them: content, context, written-out date."""

TABLES = """
CREATE TABLE keyword_users (
    user_key INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL UNIQUE,
    documents INTEGER NOT NULL,
    tokens INTEGER NOT NULL
);
CREATE TABLE keyword_postings (
    user_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    memory INTEGER NOT NULL,
    frequency REAL NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (user_key, term, memory)
) WITHOUT ROWID;
CREATE TABLE keyword_documents (
    user_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    documents INTEGER NOT NULL,
    PRIMARY KEY (user_key, term)
) WITHOUT ROWID;
"""

USER_TABLES = ("keyword_postings", "keyword_documents", "keyword_users")
"""The tables holding a user's keyword index (what `erase` deletes besides the memories)."""


def stored_terms(user_id: str, content: str, context: str, date_text: str) -> KeywordTerms:
    """The terms of a stored memory row (its searched columns as the memories table holds them)."""
    return column_terms(user_id, (content, context, date_text))


def apply_write(
    conn: sqlite3.Connection, user_id: str, removed: Iterable[IndexedMemory], added: Iterable[IndexedMemory]
) -> None:
    """Replace the postings of the memories `removed` by those of `added` and update the user's
    statistics to match, inside the caller's write transaction. (The store leaves out a memory written
    again with the searched text it had: its postings and statistics stay as they are.)"""
    removed, added = list(removed), list(added)
    if not removed and not added:
        return
    change = statistics_change(
        ((t.frequencies, t.length) for _, t in removed), ((t.frequencies, t.length) for _, t in added)
    )
    # One statement gives the user's key (a new user gets one) and adds the change to the totals.
    user_key, documents = conn.execute(
        "INSERT INTO keyword_users (user_id, documents, tokens) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET documents = documents + excluded.documents, "
        "tokens = tokens + excluded.tokens RETURNING user_key, documents",
        (user_id, change.memories, change.tokens),
    ).fetchone()
    # Sorted by term (a str key sorts fast; the sort is stable, so a term's memories stay in write
    # order), so consecutive statements touch neighbouring b-tree pages.
    deleted = [(user_key, term, rowid) for rowid, terms in removed for term in terms.frequencies]
    deleted.sort(key=itemgetter(1))
    conn.executemany("DELETE FROM keyword_postings WHERE user_key = ? AND term = ? AND memory = ?", deleted)
    inserted = list(
        chain.from_iterable(
            zip(repeat(user_key), t.frequencies, repeat(rowid), t.frequencies.values(), repeat(t.length))
            for rowid, t in added
        )
    )  # (user_key, term, memory, frequency, length), the tuples made by zip
    inserted.sort(key=itemgetter(1))
    insert_rows(conn, "INSERT INTO keyword_postings (user_key, term, memory, frequency, length)", inserted)
    _apply_documents(conn, user_key, change)
    if documents <= 0:  # the user's last memory is gone: so are its postings and term counts
        conn.execute("DELETE FROM keyword_users WHERE user_key = ?", (user_key,))


def _apply_documents(conn: sqlite3.Connection, user_key: int, change: StatisticsChange) -> None:
    """Add `change`'s term counts to the user's; terms no memory holds any more are deleted."""
    insert_rows(
        conn,
        "INSERT INTO keyword_documents (user_key, term, documents)",
        [(user_key, term, n) for term, n in change.documents.items()],
        "ON CONFLICT (user_key, term) DO UPDATE SET documents = documents + excluded.documents",
    )
    conn.executemany(
        "DELETE FROM keyword_documents WHERE user_key = ? AND term = ? AND documents <= 0",
        [(user_key, term) for term, n in change.documents.items() if n < 0],
    )


ROWS_PER_STATEMENT = 50
"""Rows one INSERT of `insert_rows` writes. Measured on LoCoMo's postings (172,597 rows in 13 saves):
one statement per row (`executemany` of a one-row INSERT) took 1.5-1.7 times the CPU of 50 rows per
statement; 200 were no faster than 50."""


def insert_rows(conn: sqlite3.Connection, insert: str, rows: Sequence[tuple[object, ...]], conflict: str = "") -> None:
    """`insert` ("INSERT INTO table (columns)") of every row of `rows` (tuples of one width), followed by
    the `conflict` clause, `ROWS_PER_STATEMENT` rows per statement; in the order of `rows`."""
    if not rows:
        return
    group = f"({', '.join('?' * len(rows[0]))})"
    whole = len(rows) - len(rows) % ROWS_PER_STATEMENT
    if whole:
        sql = f"{insert} VALUES {', '.join([group] * ROWS_PER_STATEMENT)} {conflict}"
        flat = list(chain.from_iterable(rows[:whole]))
        width = len(rows[0]) * ROWS_PER_STATEMENT  # parameters per statement
        conn.executemany(sql, [flat[start : start + width] for start in range(0, len(flat), width)])
    if whole < len(rows):
        rest = rows[whole:]
        conn.execute(f"{insert} VALUES {', '.join([group] * len(rest))} {conflict}", list(chain.from_iterable(rest)))


def erase(conn: sqlite3.Connection, user_id: str) -> None:
    """Delete the user's keyword index: its rows of every table in `USER_TABLES`."""
    row = conn.execute("SELECT user_key FROM keyword_users WHERE user_id = ?", (user_id,)).fetchone()
    if row is None:
        return
    for table in USER_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE user_key = ?", row)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The looked-up terms of one search (in query order, repeats kept), with their IDFs from the
    user's own statistics, the user's average memory length, and the user's key."""

    user_key: int
    terms: list[str]
    idfs: list[float]
    average_length: float


def search_plan(conn: sqlite3.Connection, user_id: str, terms: Sequence[str], budget: int | None) -> SearchPlan | None:
    """What a search of `terms` ranks (`core.bm25.keyword_plan` over the user's statistics), or None
    when the user has no memories or no term is left."""
    user = conn.execute(
        "SELECT user_key, documents, tokens FROM keyword_users WHERE user_id = ?", (user_id,)
    ).fetchone()
    if not terms or user is None or user[1] <= 0:
        return None
    user_key, total, tokens = int(user[0]), int(user[1]), int(user[2])
    distinct = sorted(set(terms))
    marks = ", ".join("?" * len(distinct))
    documents = dict(
        conn.execute(
            f"SELECT term, documents FROM keyword_documents WHERE user_key = ? AND term IN ({marks})",
            (user_key, *distinct),
        ).fetchall()
    )
    kept = bm25.keyword_plan(terms, documents, total, budget=budget)
    if not kept:
        return None
    return SearchPlan(user_key, kept, [bm25.idf(total, documents.get(t, 0)) for t in kept], tokens / total)


def ranked_sql(plan: SearchPlan) -> str:
    """SQL for the user's memories holding a looked-up term of `plan`, with their BM25 score (the formula
    of `core.bm25`, summed over the terms; a repeated term counts each time), as (memory, rank). Params:
    `ranked_params`. CROSS JOIN keeps the terms outside, so each term reads one range of the postings'
    primary key."""
    terms = ", ".join("(?, ?)" for _ in plan.terms)
    return f"""
    SELECT p.memory AS memory,
           sum(q.idf * p.frequency * {bm25.K1 + 1}
               / (p.frequency + {bm25.K1} * (1 - {bm25.B} + {bm25.B} * p.length / ?))) AS rank
    FROM (SELECT column1 AS term, column2 AS idf FROM (VALUES {terms})) q
    CROSS JOIN keyword_postings p
    WHERE p.user_key = ? AND p.term = q.term
    GROUP BY p.memory"""


def ranked_params(plan: SearchPlan) -> list[object]:
    """The parameters of `ranked_sql(plan)`."""
    pairs = [value for pair in zip(plan.terms, plan.idfs, strict=True) for value in pair]
    return [plan.average_length, *pairs, plan.user_key]
