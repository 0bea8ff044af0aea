"""Keyword search of the SQLite store: postings and per-user BM25 statistics (since migration 4).

A memory's terms are computed in Python by `core.keyword_index` (FTS5's `porter unicode61` tokens,
weighted per column), exactly as the PostgreSQL store computes them, and kept in these tables, all
written in the transaction of the memory write that changes them:

* `keyword_users` (user_key, user_id, documents, tokens, recent, segments): the user's integer key, how
  many memories the user has and their tokens, the rows of the user's tail, and how many segments the
  user was given. The other tables name the user by this key (migration 5), not by the user id.
* `keyword_segments` (user_key, term, segment, postings) (migration 7): the postings of one term in one
  segment, a group of at most `SEGMENT_MEMORIES` memories written (or merged) together, packed as one
  BLOB: (memory, frequency, length) per memory holding the term (`POSTING`; `memory` is the memories
  rowid). One row per term of each group of memories, not per term of each memory: LoCoMo's 2,760 turns
  written in batches of 256 are 23,817 rows instead of 172,597 (one row per posting until migration 7),
  and ranking a term reads one contiguous range of one b-tree and never a memory's row.
* `keyword_segment_memories` (user_key, memory, segment): the segment holding each memory's postings
  (all of a memory's postings are in one segment), so a rewrite or delete finds them.
* `keyword_documents` (user_key, term, documents): how many of the user's memories in segments hold
  each term.

Postings of small writes go to a tail first (migration 6): `keyword_recent` (user_key, memory, term,
frequency, length), keyed by memory, so one memory's postings are appended side by side instead of
landing on a page of the segments per term. `keyword_documents` counts the memories of segments only;
a search adds the tail's own counts, read from the user's tail (at most `TAIL_ROWS` rows), and ranks
both. When a write would take the user's tail past `TAIL_ROWS` rows, the tail and the write's postings
become new segments (a batch bigger than the tail goes there directly). A memory's postings are wholly
in the tail or wholly in one segment, so each memory is ranked over the same postings, with the same
statistics, wherever they are.

A memory rewritten with new text or deleted loses its postings: its segment's rows of its terms are
rewritten without it (deleted when no memory is left in them) and its row of `keyword_segment_memories`
is deleted, so a later memory given the same rowid starts clean.

So a user's ranking depends on that user's memories only: no other user's memories change a term's
IDF or the average length (FTS5's `bm25()` counts every row of the file). `core.bm25` has the formula;
`ranked` computes it with numpy over the postings of the looked-up terms (`term_scores`) and sums it
per memory, in the query's term order.

A user's row in `keyword_users` exists exactly while the user has memories indexed: it is deleted with
the user's last memory (and its key may then be given to a later user: no row holds it any more), and
`erase` deletes the user's rows of every table of `USER_TABLES`.

The old terms of a memory being rewritten or deleted are computed again from its stored text (content,
context, written-out date), with the same pure function that computed them when it was written.
"""

from __future__ import annotations

import json
import sqlite3
import struct
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from ..core import bm25
from ..core.keyword_index import KeywordTerms, column_terms
from ..core.keyword_statistics import StatisticsChange, statistics_change

IndexedMemory = tuple[int, KeywordTerms]
"""(memories rowid, the terms it is indexed under)."""

SearchedText = tuple[str, str, str]
"""A memory's searched columns as the memories table holds them: content, context, written-out date."""

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

SEGMENT_TABLES = """
ALTER TABLE keyword_users ADD COLUMN segments INTEGER NOT NULL DEFAULT 0;
CREATE TABLE keyword_segments (
    user_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    segment INTEGER NOT NULL,
    postings BLOB NOT NULL,
    PRIMARY KEY (user_key, term, segment)
) WITHOUT ROWID;
CREATE TABLE keyword_segment_memories (
    user_key INTEGER NOT NULL,
    memory INTEGER NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (user_key, memory)
) WITHOUT ROWID;
"""
"""Migration 7: the postings grouped in segments, and the segment of each memory."""

POSTING = np.dtype([("memory", "<i8"), ("frequency", "<f8"), ("length", "<i4")])
"""One posting in a segment's BLOB: the memories rowid, the weighted frequency of the term in it (exactly
as `core.keyword_index` computed it) and the memory's length; packed, little-endian, 20 bytes."""
_PACK = struct.Struct("<qdi").pack
if struct.calcsize("<qdi") != POSTING.itemsize:
    raise AssertionError("the packed posting and its numpy dtype disagree")

TAIL_ROWS = 1000
"""Most postings a user's tail holds (LoCoMo: ~60 postings a turn with its context, so ~16 turns). A
search reads the whole tail of the user; a merge writes one segment row per term of the tail and the write."""

SEGMENT_MEMORIES = 48
"""Most memories in one segment: a batch of more is cut into several. So a term's BLOB (at most 960 bytes)
stays inside its b-tree cell (a 4 kB page holds ~1,000 bytes of a row in place; more spill to overflow
pages: with 512 memories a segment the table took 1.45 times the space), and a rewrite or delete of a
memory rewrites at most that much per term of it."""

USER_TABLES = ("keyword_segments", "keyword_segment_memories", "keyword_recent", "keyword_documents", "keyword_users")
"""The tables holding a user's keyword index (what `erase` deletes besides the memories)."""

_CHUNK = 500
"""Memories per statement when looking up where postings are."""


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
    postings = sum(len(t.frequencies) for _, t in added)
    # One statement gives the user's key (a new user gets one), adds the change to the totals and counts
    # this write's postings in the user's tail, where most writes put them: the row is written again
    # below only when they went elsewhere (a merge) or the tail lost rows.
    user_key, documents, counted, segments = conn.execute(
        "INSERT INTO keyword_users (user_id, documents, tokens, recent) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET documents = documents + excluded.documents, "
        "tokens = tokens + excluded.tokens, recent = recent + excluded.recent "
        "RETURNING user_key, documents, recent, segments",
        (
            user_id,
            len(added) - len(removed),
            sum(t.length for _, t in added) - sum(t.length for _, t in removed),
            postings,
        ),
    ).fetchone()
    if documents <= 0:  # the user's last memory is gone: so are its postings and term counts
        erase(conn, user_id)
        return
    recent, given = counted - postings, segments  # rows of the user's tail and segments given, before this write
    tailed = _tailed(conn, user_key, [rowid for rowid, _ in removed]) if recent else set()
    for rowid in tailed:
        recent -= conn.execute(
            "DELETE FROM keyword_recent WHERE user_key = ? AND memory = ?", (user_key, rowid)
        ).rowcount
    merged = [(rowid, terms) for rowid, terms in removed if rowid not in tailed]  # in segments
    if merged:
        _remove_from_segments(conn, user_key, merged)
    if recent + postings <= TAIL_ROWS:
        # One statement per memory: its terms and frequencies go as one JSON object (a float's repr
        # reads back as the same float), unpacked by SQLite, not bound one value at a time.
        conn.executemany(
            "INSERT INTO keyword_recent (user_key, memory, term, frequency, length) "
            "SELECT ?, ?, key, value, ? FROM json_each(?)",
            [(user_key, rowid, t.length, json.dumps(t.frequencies)) for rowid, t in added],
        )
        # The tail's memories are counted from the tail itself: only postings gone from segments change
        # the term counts (none, for a write of new memories).
        change = statistics_change(((t.frequencies, t.length) for _, t in merged), ()) if merged else _NO_CHANGE
    else:  # the tail and this write become segments together
        memories = _tail_memories(conn, user_key) if recent else []
        memories.extend((rowid, t.length, t.frequencies) for rowid, t in added)
        segments = write_segments(conn, user_key, segments, memories)
        if recent:
            conn.execute("DELETE FROM keyword_recent WHERE user_key = ?", (user_key,))
        change = _merge_change(merged, chain.from_iterable(frequencies for _, _, frequencies in memories))
        postings = recent = 0
    _apply_documents(conn, user_key, change)
    if recent + postings != counted or segments != given:
        conn.execute(
            "UPDATE keyword_users SET recent = ?, segments = ? WHERE user_key = ?",
            (recent + postings, segments, user_key),
        )


_NO_CHANGE = StatisticsChange(0, 0, {})


def _of_memories(conn: sqlite3.Connection, select: str, user_key: int, rowids: Sequence[int]) -> Iterator[Any]:
    """The rows of `select` (a query ending in `WHERE user_key = ? AND memory IN ({marks})`) for the
    memories `rowids` of the user, `_CHUNK` rowids a statement (SQLite bounds a statement's parameters)."""
    for start in range(0, len(rowids), _CHUNK):
        chunk = rowids[start : start + _CHUNK]
        yield from conn.execute(select.format(marks=", ".join("?" * len(chunk))), (user_key, *chunk))


def _tailed(conn: sqlite3.Connection, user_key: int, rowids: Sequence[int]) -> set[int]:
    """Those of the memories `rowids` whose postings are in the user's tail."""
    select = "SELECT DISTINCT memory FROM keyword_recent WHERE user_key = ? AND memory IN ({marks})"
    return {row[0] for row in _of_memories(conn, select, user_key, rowids)}


def _tail_memories(conn: sqlite3.Connection, user_key: int) -> list[tuple[int, int, dict[str, float]]]:
    """The memories of the user's tail as (rowid, length, {term: frequency}), in rowid order."""
    memories: dict[int, tuple[int, dict[str, float]]] = {}
    for memory, term, frequency, length in conn.execute(
        "SELECT memory, term, frequency, length FROM keyword_recent WHERE user_key = ?", (user_key,)
    ):
        memories.setdefault(memory, (length, {}))[1][term] = frequency
    return [(memory, length, frequencies) for memory, (length, frequencies) in memories.items()]


def segment_rows(
    user_key: int, segment: int, memories: Iterable[tuple[int, int, dict[str, float]]]
) -> list[tuple[int, str, int, bytes]]:
    """The `keyword_segments` rows of one segment holding `memories` ((rowid, length, {term: frequency})),
    in term order: per term, the packed postings of the memories holding it, in the order given."""
    packed: dict[str, list[bytes]] = {}
    for rowid, length, frequencies in memories:
        for term, frequency in frequencies.items():
            posting = _PACK(rowid, frequency, length)
            held = packed.get(term)
            if held is None:
                packed[term] = [posting]
            else:
                held.append(posting)
    return [(user_key, term, segment, b"".join(packed[term])) for term in sorted(packed)]


def write_segments(
    conn: sqlite3.Connection, user_key: int, segments: int, memories: Sequence[tuple[int, int, dict[str, float]]]
) -> int:
    """Write `memories` as new segments of the user (numbered after the `segments` it was given, at most
    `SEGMENT_MEMORIES` memories each) and record each memory's segment; returns the segments given now.
    The rows of all the new segments go in key order (term, then segment), so consecutive inserts land
    side by side in the b-tree."""
    rows: list[tuple[int, str, int, bytes]] = []
    owners: list[tuple[int, int, int]] = []
    for start in range(0, len(memories), SEGMENT_MEMORIES):
        chunk = memories[start : start + SEGMENT_MEMORIES]
        segments += 1
        rows.extend(segment_rows(user_key, segments, chunk))
        owners.extend((user_key, rowid, segments) for rowid, _, _ in chunk)
    if len(memories) > SEGMENT_MEMORIES:
        rows.sort(key=itemgetter(1))  # stable: a term's segments stay in ascending order
    conn.executemany("INSERT INTO keyword_segments (user_key, term, segment, postings) VALUES (?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO keyword_segment_memories (user_key, memory, segment) VALUES (?, ?, ?)", owners)
    return segments


def _remove_from_segments(conn: sqlite3.Connection, user_key: int, merged: Sequence[IndexedMemory]) -> None:
    """Delete the postings of the memories `merged` (all in segments) and their segment rows: each row of
    their segments and terms is rewritten without them, or deleted when no memory is left in it."""
    rowids = [rowid for rowid, _ in merged]
    select = "SELECT memory, segment FROM keyword_segment_memories WHERE user_key = ? AND memory IN ({marks})"
    segment_of: dict[int, int] = dict(_of_memories(conn, select, user_key, rowids))
    conn.executemany(
        "DELETE FROM keyword_segment_memories WHERE user_key = ? AND memory = ?", [(user_key, r) for r in rowids]
    )
    gone: dict[tuple[str, int], list[int]] = {}
    for rowid, terms in merged:
        segment = segment_of.get(rowid)
        if segment is None:  # a memory without any term has no postings to delete
            continue
        for term in terms.frequencies:
            gone.setdefault((term, segment), []).append(rowid)
    keys = sorted(gone)
    rewritten: list[tuple[bytes, int, str, int]] = []
    emptied: list[tuple[int, str, int]] = []
    for start in range(0, len(keys), _CHUNK):
        rows = conn.execute(
            "SELECT s.term, s.segment, s.postings FROM json_each(?) k CROSS JOIN keyword_segments s ON s.user_key = ? "
            "AND s.term = json_extract(k.value, '$[0]') AND s.segment = json_extract(k.value, '$[1]')",
            (json.dumps(keys[start : start + _CHUNK], ensure_ascii=False), user_key),
        )
        for term, segment, blob in rows:
            postings = np.frombuffer(blob, dtype=POSTING)
            kept = postings[~np.isin(postings["memory"], gone[(term, segment)])]
            if len(kept):
                rewritten.append((kept.tobytes(), user_key, term, segment))
            else:
                emptied.append((user_key, term, segment))
    conn.executemany(
        "UPDATE keyword_segments SET postings = ? WHERE user_key = ? AND term = ? AND segment = ?", rewritten
    )
    conn.executemany("DELETE FROM keyword_segments WHERE user_key = ? AND term = ? AND segment = ?", emptied)


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


def term_scores(
    idf: float | np.ndarray, frequencies: np.ndarray, lengths: np.ndarray, average_length: float
) -> np.ndarray:
    """BM25 of one term (`core.bm25`'s formula) for each posting, in FTS5's order of operations: the same
    float each time, whatever the number of postings."""
    k1, b = bm25.K1, bm25.B
    return idf * frequencies * (k1 + 1) / (frequencies + k1 * (1 - b + b * lengths / average_length))


def _postings(conn: sqlite3.Connection, plan: SearchPlan) -> dict[str, bytes]:
    """The postings of each looked-up term, packed (`POSTING`): its segments' BLOBs, then its rows of the
    user's tail."""
    distinct = sorted(set(plan.terms))
    marks = ", ".join("?" * len(distinct))
    blobs: dict[str, list[bytes]] = {}
    for term, blob in conn.execute(
        f"SELECT term, postings FROM keyword_segments WHERE user_key = ? AND term IN ({marks})",
        (plan.user_key, *distinct),
    ):
        blobs.setdefault(term, []).append(blob)
    if plan.tail:
        for term, memory, frequency, length in conn.execute(
            f"SELECT term, memory, frequency, length FROM keyword_recent WHERE user_key = ? AND term IN ({marks})",
            (plan.user_key, *distinct),
        ):
            blobs.setdefault(term, []).append(_PACK(memory, frequency, length))
    return {term: b"".join(held) for term, held in blobs.items()}


def ranked(conn: sqlite3.Connection, plan: SearchPlan) -> tuple[np.ndarray, np.ndarray]:
    """The user's memories holding a looked-up term of `plan` (memories rowids) and their BM25 score,
    summed over the terms in query order (a repeated term counts each time), best first: by score, then
    the newest rowid first."""
    found = _postings(conn, plan)
    looked_up = [(found[term], idf) for term, idf in zip(plan.terms, plan.idfs, strict=True) if term in found]
    if not looked_up:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    postings = np.frombuffer(b"".join(held for held, _ in looked_up), dtype=POSTING)
    idfs = np.repeat([idf for _, idf in looked_up], [len(held) // POSTING.itemsize for held, _ in looked_up])
    scores = term_scores(idfs, postings["frequency"], postings["length"], plan.average_length)
    # Each posting's memory numbered among the distinct memories (ascending); bincount then adds each
    # memory's term scores in the order given: the query's term order.
    memories = postings["memory"]
    by_memory = memories.argsort()
    ordered = memories[by_memory]
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    number = np.empty(len(ordered), dtype=np.intp)
    number[by_memory] = np.cumsum(first) - 1
    unique = ordered[first][::-1]  # newest rowid first, kept among equal scores by the stable sort
    totals = np.bincount(number, weights=scores)[::-1]
    best = np.argsort(-totals, kind="stable")
    return unique[best], totals[best]
