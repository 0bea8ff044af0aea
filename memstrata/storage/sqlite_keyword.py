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

Postings of small writes go to a tail first (migration 6): `keyword_recent` (user_key, memory, term,
frequency, length), keyed by memory, so one memory's postings are appended side by side instead of
landing on a page of `keyword_postings` per term (a one-memory write to a 400-memory user dirtied ~75
pages of the write-ahead log, against ~21 before per-user statistics). `keyword_documents` counts the
memories of `keyword_postings` only; a search adds the tail's own counts, read from the user's tail
(at most `TAIL_ROWS` rows), and ranks both. When a write would take the user's tail past `TAIL_ROWS`
rows, the tail and the write's postings are merged into `keyword_postings` in term order (a batch
bigger than the tail goes there directly). A memory's postings are wholly in one of the two tables, so
each memory is ranked over the same postings, with the same statistics, as with one table.

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

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
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

TAIL_TABLE = """
ALTER TABLE keyword_users ADD COLUMN recent INTEGER NOT NULL DEFAULT 0;
CREATE TABLE keyword_recent (
    user_key INTEGER NOT NULL,
    memory INTEGER NOT NULL,
    term TEXT NOT NULL,
    frequency REAL NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (user_key, memory, term)
) WITHOUT ROWID;
"""
"""Migration 6: the postings tail and how many rows of it each user has (`keyword_users.recent`)."""

TAIL_ROWS = 1000
"""Most postings a user's tail holds (LoCoMo: ~60 postings a turn with its context, so ~16 turns). A
search reads the whole tail of the user; a merge rewrites the pages of `keyword_postings` its terms
fall on, once for every write the tail took."""

USER_TABLES = ("keyword_postings", "keyword_recent", "keyword_documents", "keyword_users")
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
    # One statement gives the user's key (a new user gets one) and adds the change to the totals.
    user_key, documents, recent = conn.execute(
        "INSERT INTO keyword_users (user_id, documents, tokens) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET documents = documents + excluded.documents, "
        "tokens = tokens + excluded.tokens RETURNING user_key, documents, recent",
        (user_id, len(added) - len(removed), sum(t.length for _, t in added) - sum(t.length for _, t in removed)),
    ).fetchone()
    if documents <= 0:  # the user's last memory is gone: so are its postings and term counts
        erase(conn, user_id)
        return
    held = recent  # rows of the user's tail before this write
    tailed = _tailed(conn, user_key, [rowid for rowid, _ in removed]) if recent else set()
    for rowid in tailed:
        recent -= conn.execute(
            "DELETE FROM keyword_recent WHERE user_key = ? AND memory = ?", (user_key, rowid)
        ).rowcount
    merged = [(rowid, terms) for rowid, terms in removed if rowid not in tailed]  # in keyword_postings
    # Sorted by term (a str key sorts fast; the sort is stable, so a term's memories stay in write
    # order), so consecutive statements touch neighbouring b-tree pages.
    deleted = [(user_key, term, rowid) for rowid, terms in merged for term in terms.frequencies]
    if deleted:
        deleted.sort(key=itemgetter(1))
        conn.executemany("DELETE FROM keyword_postings WHERE user_key = ? AND term = ? AND memory = ?", deleted)
    postings = sum(len(t.frequencies) for _, t in added)
    if recent + postings <= TAIL_ROWS:
        # One statement per memory: its terms and frequencies go as one JSON object (a float's repr
        # reads back as the same float), unpacked by SQLite, not bound one value at a time.
        conn.executemany(
            "INSERT INTO keyword_recent (user_key, memory, term, frequency, length) "
            "SELECT ?, ?, key, value, ? FROM json_each(?)",
            [(user_key, rowid, t.length, json.dumps(t.frequencies)) for rowid, t in added],
        )
        change = statistics_change(((t.frequencies, t.length) for _, t in merged), ())
    else:  # the tail and this write go to keyword_postings together
        tail_terms = (
            [term for (term,) in conn.execute("SELECT term FROM keyword_recent WHERE user_key = ?", (user_key,))]
            if recent
            else []
        )
        # One statement: the written memories go as one JSON array of [rowid, length, {term: frequency}]
        # (unpacked once per memory: MATERIALIZED), joined by the tail's rows, inserted in key order.
        conn.execute(
            "WITH written AS MATERIALIZED (SELECT json_extract(m.value, '$[0]') AS memory, "
            "json_extract(m.value, '$[1]') AS length, json_extract(m.value, '$[2]') AS terms FROM json_each(?) m) "
            "INSERT INTO keyword_postings (user_key, term, memory, frequency, length) "
            "SELECT user_key, term, memory, frequency, length FROM ("
            "SELECT ? AS user_key, f.key AS term, w.memory AS memory, f.value AS frequency, w.length AS length "
            "FROM written w, json_each(w.terms) f "
            "UNION ALL SELECT user_key, term, memory, frequency, length FROM keyword_recent WHERE user_key = ?"
            ") ORDER BY term, memory",
            (json.dumps([(rowid, t.length, t.frequencies) for rowid, t in added]), user_key, user_key),
        )
        if recent:
            conn.execute("DELETE FROM keyword_recent WHERE user_key = ?", (user_key,))
        change = _merge_change(merged, chain(tail_terms, chain.from_iterable(t.frequencies for _, t in added)))
        postings = recent = 0
    _apply_documents(conn, user_key, change)
    if recent + postings != held:
        conn.execute("UPDATE keyword_users SET recent = ? WHERE user_key = ?", (recent + postings, user_key))


def _tailed(conn: sqlite3.Connection, user_key: int, rowids: Sequence[int]) -> set[int]:
    """Those of the memories `rowids` whose postings are in the user's tail."""
    found: set[int] = set()
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        found.update(
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT memory FROM keyword_recent WHERE user_key = ? AND memory IN ({marks})",
                (user_key, *chunk),
            )
        )
    return found


def _merge_change(removed: Sequence[IndexedMemory], terms: Iterable[str]) -> StatisticsChange:
    """The change of `keyword_documents` from removing the postings of `removed` and adding postings of
    `terms` (one term per memory and term)."""
    counts: Counter[str] = Counter(terms)
    if removed:
        counts.update(statistics_change(((t.frequencies, t.length) for _, t in removed), ()).documents)
    return StatisticsChange(0, 0, {term: n for term, n in sorted(counts.items()) if n})


def _apply_documents(conn: sqlite3.Connection, user_key: int, change: StatisticsChange) -> None:
    """Add `change`'s term counts to the user's; terms no memory holds any more are deleted. The counts
    go as one JSON object, unpacked by SQLite (one statement of one shape, whatever the number of terms)."""
    if not change.documents:
        return
    conn.execute(
        "INSERT INTO keyword_documents (user_key, term, documents) SELECT ?, key, value FROM json_each(?) WHERE true "
        "ON CONFLICT (user_key, term) DO UPDATE SET documents = documents + excluded.documents",
        (user_key, json.dumps(change.documents, ensure_ascii=False)),
    )
    fell = [(user_key, term) for term, n in change.documents.items() if n < 0]
    if fell:
        conn.executemany("DELETE FROM keyword_documents WHERE user_key = ? AND term = ? AND documents <= 0", fell)


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
    user's own statistics, the user's average memory length, the user's key, and whether the user's
    tail holds postings."""

    user_key: int
    terms: list[str]
    idfs: list[float]
    average_length: float
    tail: bool = False


def search_plan(conn: sqlite3.Connection, user_id: str, terms: Sequence[str], budget: int | None) -> SearchPlan | None:
    """What a search of `terms` ranks (`core.bm25.keyword_plan` over the user's statistics), or None
    when the user has no memories or no term is left."""
    user = conn.execute(
        "SELECT user_key, documents, tokens, recent FROM keyword_users WHERE user_id = ?", (user_id,)
    ).fetchone()
    if not terms or user is None or user[1] <= 0:
        return None
    user_key, total, tokens, recent = int(user[0]), int(user[1]), int(user[2]), int(user[3])
    distinct = sorted(set(terms))
    marks = ", ".join("?" * len(distinct))
    documents = dict(
        conn.execute(
            f"SELECT term, documents FROM keyword_documents WHERE user_key = ? AND term IN ({marks})",
            (user_key, *distinct),
        ).fetchall()
    )
    if recent:  # the tail's memories are counted from the tail itself
        for term, count in conn.execute(
            f"SELECT term, count(*) FROM keyword_recent WHERE user_key = ? AND term IN ({marks}) GROUP BY term",
            (user_key, *distinct),
        ):
            documents[term] = documents.get(term, 0) + count
    kept = bm25.keyword_plan(terms, documents, total, budget=budget)
    if not kept:
        return None
    idfs = [bm25.idf(total, documents.get(t, 0)) for t in kept]
    return SearchPlan(user_key, kept, idfs, tokens / total, tail=bool(recent))


def _score(table: str) -> str:
    """Each (memory, BM25 term score) of the looked-up terms' postings in `table` (the formula of
    `core.bm25`); params: average length, (term, idf) pairs, user_key. CROSS JOIN keeps the terms
    outside, so each term reads one range of the table's primary key (of the user's tail, a scan)."""
    return f"""
    SELECT p.memory AS memory,
           q.idf * p.frequency * {bm25.K1 + 1}
               / (p.frequency + {bm25.K1} * (1 - {bm25.B} + {bm25.B} * p.length / ?)) AS score
    FROM (SELECT column1 AS term, column2 AS idf FROM (VALUES {{terms}})) q
    CROSS JOIN {table} p
    WHERE p.user_key = ? AND p.term = q.term"""


def ranked_sql(plan: SearchPlan) -> str:
    """SQL for the user's memories holding a looked-up term of `plan`, with their BM25 score (summed
    over the terms; a repeated term counts each time), as (memory, rank), from `keyword_postings` and,
    when it holds any, the user's tail. Params: `ranked_params`."""
    terms = ", ".join("(?, ?)" for _ in plan.terms)
    parts = [_score("keyword_postings").format(terms=terms)]
    if plan.tail:
        parts.append(_score("keyword_recent").format(terms=terms))
    scored = " UNION ALL ".join(parts)
    return f"SELECT p.memory AS memory, sum(p.score) AS rank FROM ({scored}) p GROUP BY p.memory"


def ranked_params(plan: SearchPlan) -> list[object]:
    """The parameters of `ranked_sql(plan)`."""
    pairs = [value for pair in zip(plan.terms, plan.idfs, strict=True) for value in pair]
    one: list[object] = [plan.average_length, *pairs, plan.user_key]
    return one * 2 if plan.tail else one
