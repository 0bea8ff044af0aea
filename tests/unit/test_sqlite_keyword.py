"""The SQLite store's keyword index (`storage/sqlite_keyword.py`): per-user statistics kept exact by every
write, migration 4 building them for a file of the old schema, and the ranking against FTS5's own bm25().

The corpus is real text nobody here wrote: paragraphs of the standard library's docstrings, each with a
context (the paragraph before it) and a creation date, the way conversation turns are stored.
"""

from __future__ import annotations

import importlib
import inspect
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstrata.core.keyword_statistics import statistics_change
from memstrata.models import EventType, MemoryRecord, Scope, new_event, new_record
from memstrata.storage import open_store, sqlite_keyword
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore, fts_query
from memstrata.storage.sqlite_keyword import POSTING, TAIL_ROWS, stored_terms
from memstrata.storage.sqlite_schema import MIGRATIONS

_MODULES = ("json", "csv", "logging", "pathlib", "argparse", "datetime", "collections", "zipfile")


def _paragraphs() -> list[str]:
    texts: list[str] = []
    for name in _MODULES:
        for key, member in sorted(vars(importlib.import_module(name)).items()):
            if key.startswith("_") or not callable(member):
                continue
            doc = inspect.getdoc(member) or ""
            texts.extend(p.strip() for p in doc.split("\n\n") if 20 < len(p.strip()) < 1500)
    return list(dict.fromkeys(texts))[:300]


TEXTS = _paragraphs()
QUERIES = [s.strip() for t in TEXTS[::5] for s in t.split(". ") if 3 <= len(s.split()) <= 12][:30]


def _records(user_id: str, texts: list[str], start: int = 0) -> list[MemoryRecord]:
    day0 = datetime(2023, 1, 1, tzinfo=UTC)
    records = []
    for number, text in enumerate(texts, start=start):
        at = day0 + timedelta(days=number // 7, minutes=number)
        record = new_record(scope=Scope(user_id), content=text)
        records.append(record.evolve(context=texts[number - start - 1] if number > start else "", created_at=at))
    return records


def _kept(conn: sqlite3.Connection) -> tuple[dict, dict, dict]:
    """The statistics and postings the store keeps, per user: those of the segments and of the tail
    together (a term's count is `keyword_documents`' plus the tail's memories holding it). Checks that
    each memory's postings are in one place (the tail, or the one segment `keyword_segment_memories`
    names) and that `keyword_users.recent` counts the user's tail."""
    totals = {u: (n, t) for u, n, t in conn.execute("SELECT user_id, documents, tokens FROM keyword_users")}
    names = dict(conn.execute("SELECT user_key, user_id FROM keyword_users"))
    documents = {
        (names[k], t): n for k, t, n in conn.execute("SELECT user_key, term, documents FROM keyword_documents")
    }
    postings: dict = {}
    in_segments: dict = {}
    for k, t, s, blob in conn.execute("SELECT user_key, term, segment, postings FROM keyword_segments"):
        for m, f, n in np.frombuffer(blob, dtype=POSTING).tolist():
            assert (names[k], t, m) not in postings  # one posting per memory and term
            postings[(names[k], t, m)] = (f, n)
            in_segments.setdefault((names[k], m), set()).add(s)
    segment_of = {
        (names[k], m): s for k, m, s in conn.execute("SELECT user_key, memory, segment FROM keyword_segment_memories")
    }
    # every memory's postings are in the one segment its row names, and only memories with postings have one
    assert in_segments == {key: {s} for key, s in segment_of.items()}
    merged = {(u, m) for u, _, m in postings}
    tail = {
        (names[k], t, m): (f, n)
        for k, m, t, f, n in conn.execute("SELECT user_key, memory, term, frequency, length FROM keyword_recent")
    }
    assert not merged & {(u, m) for u, _, m in tail}
    for user, term, _ in tail:
        documents[(user, term)] = documents.get((user, term), 0) + 1
    recent = dict(conn.execute("SELECT user_id, recent FROM keyword_users"))
    assert recent == {u: sum(1 for key in tail if key[0] == u) for u in recent}
    return totals, documents, postings | tail


def _recounted(conn: sqlite3.Connection) -> tuple[dict, dict, dict]:
    """The same, recounted from scratch from the memories' stored text."""
    totals: dict = {}
    documents: dict = {}
    postings: dict = {}
    by_user: dict[str, list] = {}
    for user_id, rowid, *texts in conn.execute("SELECT user_id, rowid, content, context, date_text FROM memories"):
        terms = stored_terms(user_id, *texts)
        by_user.setdefault(user_id, []).append((list(terms.frequencies), terms.length))
        for term, frequency in terms.frequencies.items():
            postings[(user_id, term, rowid)] = (frequency, terms.length)
    for user_id, rows in by_user.items():
        change = statistics_change((), rows)
        totals[user_id] = (change.memories, change.tokens)
        documents.update({(user_id, t): n for t, n in change.documents.items()})
    return totals, documents, postings


def _assert_exact(store: SQLiteStore) -> None:
    kept, recounted = store._read(_kept), store._read(_recounted)
    assert kept[0] == recounted[0]
    assert kept[1] == recounted[1]
    assert kept[2] == recounted[2]


@pytest.fixture(params=["sqlite", "sqlcipher"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = open_store(tmp_path / "m.db", key="keyword-test key" if request.param == "sqlcipher" else None)
    assert isinstance(opened, SQLiteStore)
    try:
        yield opened
    finally:
        opened.close()


def test_statistics_stay_exact_through_every_kind_of_write(store: SQLiteStore) -> None:
    alice, bob = _records("alice", TEXTS[:120]), _records("bob", TEXTS[100:200])
    for start in range(0, 120, 40):
        store.save("alice", alice[start : start + 40])
    store.save("bob", bob)
    _assert_exact(store)
    # rewrites (new text), a rewrite repeated in one save (the last wins), and unchanged text
    rewritten = [r.evolve(content=f"Zebra crossing {i} near the quarry") for i, r in enumerate(alice[:20])]
    store.save("alice", [*rewritten, rewritten[0].evolve(content="only the last write counts"), *alice[40:45]])
    _assert_exact(store)
    # supersession: the old memory closed, a new one added, in one write
    old, new = alice[50], new_record(scope=Scope("alice"), content="The csv module now writes TSV too")
    closed = old.evolve(valid_to=datetime(2024, 1, 1, tzinfo=UTC), superseded_by=new.id)
    store.save("alice", [closed, new], [new_event(new, EventType.ADD, after=new.content)])
    _assert_exact(store)
    # deletes, including unknown ids, then every memory of bob one by one
    store.delete("alice", [r.id for r in alice[60:80]] + ["no-such-id"])
    _assert_exact(store)
    for record in bob[:10]:
        store.delete("bob", [record.id])
    _assert_exact(store)
    store.delete("bob", [r.id for r in bob])
    totals, documents, postings = store._read(_kept)
    assert (
        "bob" not in totals and not any(u == "bob" for u, _ in documents) and not any(k[0] == "bob" for k in postings)
    )
    # erasure leaves no statistic of the user, and the other user's untouched
    store.save("bob", bob[:5])
    store.erase_user("bob")
    _assert_exact(store)
    totals, documents, postings = store._read(_kept)
    assert set(totals) == {"alice"} and {u for u, _ in documents} == {"alice"} and {k[0] for k in postings} == {"alice"}


def _file_at_schema(path: Path, version: int, fresh: Path) -> None:
    """Write at `path` a file of schema `version` (its first migrations only) holding the memories rows
    of the store file `fresh`, copied unchanged; the migrations after `version` then run on opening it."""
    with sqlite3.connect(path, isolation_level=None) as old:
        for migration in MIGRATIONS[:3]:
            migration(old)
        old.execute(f"ATTACH DATABASE '{fresh}' AS fresh")
        listed = ", ".join(r[1] for r in old.execute("PRAGMA table_info(memories)"))
        old.execute(f"INSERT INTO memories ({listed}) SELECT {listed} FROM fresh.memories ORDER BY rowid")
        old.execute("DETACH DATABASE fresh")
        for migration in MIGRATIONS[3:version]:  # after the rows, as a file that had them when migrated
            migration(old)
        old.execute(f"PRAGMA user_version = {version}")


def _assert_ranks_alike(migrated: SQLiteStore, fresh: SQLiteStore, users: Iterator[str]) -> None:
    """The migrated store holds the fresh one's postings and statistics, exactly, and ranks alike."""
    _assert_exact(migrated)
    assert migrated._read(_kept) == fresh._read(_kept)
    for user_id in users:
        for query in QUERIES:
            got = migrated.keyword_search(user_id, query, MemoryFilter(), limit=10)
            expected = fresh.keyword_search(user_id, query, MemoryFilter(), limit=10)
            assert [(h.record.id, h.score) for h in got] == [(h.record.id, h.score) for h in expected], query


def _tables(store: SQLiteStore) -> set[str]:
    return {r[0] for r in store._read(lambda c: c.execute("SELECT name FROM sqlite_master").fetchall())}


def _two_users_store(path: Path) -> dict[str, list[MemoryRecord]]:
    """A store file at `path` with two users' memories (their texts overlap), written by the current code."""
    users = {"alice": _records("alice", TEXTS[:150]), "bob": _records("bob", TEXTS[120:300], start=120)}
    store = SQLiteStore(path)
    for user_id, records in users.items():
        store.save(user_id, records)
    store.close()
    return users


@contextmanager
def _migrated_and_fresh(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """The old file of `_file_at_schema` opened (so migrated) and the fresh store it was copied from."""
    migrated, fresh = SQLiteStore(tmp_path / "old.db"), SQLiteStore(tmp_path / "fresh.db")
    try:
        yield migrated, fresh
    finally:
        migrated.close()
        fresh.close()


def test_migration_4_indexes_a_file_of_the_old_schema(tmp_path: Path) -> None:
    """A file written by migrations 1-3 (FTS5 index) gets the postings and per-user statistics, and then
    ranks exactly as a store that wrote the same memories itself; the FTS5 index is gone."""
    users = _two_users_store(tmp_path / "fresh.db")
    _file_at_schema(tmp_path / "old.db", 3, tmp_path / "fresh.db")
    with sqlite3.connect(tmp_path / "old.db") as old:
        assert old.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'json'").fetchone()[0] > 0
    with _migrated_and_fresh(tmp_path) as (migrated, fresh):
        _assert_ranks_alike(migrated, fresh, iter(users))
        assert not any(name.startswith("memories_fts") for name in _tables(migrated))


def test_migration_5_keys_the_tables_of_a_file_of_migration_4(tmp_path: Path) -> None:
    """A file at schema 4 (postings and statistics naming the user by user_id) gets the integer user keys
    and then holds the same postings and statistics, and ranks exactly, as a store that wrote the same
    memories itself; writes and an erasure after the migration keep them exact."""
    users = _two_users_store(tmp_path / "fresh.db")
    _file_at_schema(tmp_path / "old.db", 4, tmp_path / "fresh.db")
    with sqlite3.connect(tmp_path / "old.db") as old:
        assert old.execute("SELECT count(*) FROM keyword_postings WHERE user_id = 'bob'").fetchone()[0] > 1000
    with _migrated_and_fresh(tmp_path) as (migrated, fresh):
        _assert_ranks_alike(migrated, fresh, iter(users))
        tables = _tables(migrated)
        assert "keyword_totals" not in tables and not any(name.endswith("_m004") for name in tables)
        migrated.delete("alice", [r.id for r in users["alice"][:30]])
        migrated.save("carol", _records("carol", TEXTS[:20]))
        migrated.erase_user("bob")
        _assert_exact(migrated)
        assert set(migrated._read(_kept)[0]) == {"alice", "carol"}


def _move_to_tail(path: Path, user_id: str, memories: int) -> None:
    """In a file at schema 6, move the postings of the user's newest `memories` from keyword_postings to the
    tail, as single writes there left them: the tail's rows counted in `keyword_users.recent` and not in
    `keyword_documents`."""
    with sqlite3.connect(path, isolation_level=None) as old:
        (key,) = old.execute("SELECT user_key FROM keyword_users WHERE user_id = ?", (user_id,)).fetchone()
        newest = f"SELECT rowid FROM memories WHERE user_id = '{user_id}' ORDER BY rowid DESC LIMIT {memories}"
        old.execute(
            "INSERT INTO keyword_recent (user_key, memory, term, frequency, length) "
            f"SELECT user_key, memory, term, frequency, length FROM keyword_postings WHERE memory IN ({newest})"
        )
        old.execute(f"DELETE FROM keyword_postings WHERE memory IN ({newest})")
        old.execute(
            "UPDATE keyword_documents SET documents = documents - (SELECT count(*) FROM keyword_recent r "
            "WHERE r.user_key = keyword_documents.user_key AND r.term = keyword_documents.term) WHERE user_key = ?",
            (key,),
        )
        old.execute("DELETE FROM keyword_documents WHERE documents <= 0")
        old.execute(
            "UPDATE keyword_users SET recent = (SELECT count(*) FROM keyword_recent WHERE user_key = ?) "
            "WHERE user_key = ?",
            (key, key),
        )
        assert 0 < old.execute("SELECT recent FROM keyword_users WHERE user_key = ?", (key,)).fetchone()[0] <= TAIL_ROWS


def test_migration_7_groups_the_postings_of_a_file_of_migration_6_in_segments(tmp_path: Path) -> None:
    """A file at schema 6 (one keyword_postings row per term of each memory, the newest memories of a user in
    the tail) gets segments and then holds the same postings and statistics, and ranks exactly, as a store
    that wrote the same memories itself; rewrites and deletes (of memories in segments and in the tail),
    new writes and an erasure after the migration keep them exact."""
    users = _two_users_store(tmp_path / "fresh.db")
    deleted = {r.id for r in users["bob"][::9]}
    fresh = SQLiteStore(tmp_path / "fresh.db")
    fresh.delete("bob", sorted(deleted))  # rowids with gaps, as deletes leave them
    fresh.close()
    users["bob"] = [r for r in users["bob"] if r.id not in deleted]
    _file_at_schema(tmp_path / "old.db", 6, tmp_path / "fresh.db")
    _move_to_tail(tmp_path / "old.db", "alice", 5)
    with sqlite3.connect(tmp_path / "old.db") as old:
        assert old.execute("SELECT count(*) FROM keyword_postings").fetchone()[0] > 5000
    with _migrated_and_fresh(tmp_path) as (migrated, fresh):
        _assert_ranks_alike(migrated, fresh, iter(users))
        assert "keyword_postings" not in _tables(migrated)
        # each user's memories outside the tail, in groups of SEGMENT_MEMORIES
        grouped = migrated._read(
            lambda c: c.execute(
                "SELECT u.user_id, u.segments, u.documents, count(s.memory), "
                "(SELECT count(DISTINCT memory) FROM keyword_recent r WHERE r.user_key = u.user_key) "
                "FROM keyword_users u JOIN keyword_segment_memories s USING (user_key) GROUP BY u.user_key"
            ).fetchall()
        )
        assert {(u, m, n - tailed) for u, _, n, m, tailed in grouped} == {
            ("alice", 145, 145),
            ("bob", len(users["bob"]), len(users["bob"])),
        }
        assert all(segments == -(-m // sqlite_keyword.SEGMENT_MEMORIES) for _, segments, _, m, _ in grouped)
        alice = users["alice"]
        migrated.save(
            "alice", [alice[0].evolve(content="A zebra crossing, rewritten"), alice[-1].evolve(content="Tail")]
        )
        migrated.delete("alice", [r.id for r in alice[10:40]] + [alice[-2].id])
        migrated.save("carol", _records("carol", TEXTS[:20]))
        migrated.erase_user("bob")
        _assert_exact(migrated)
        assert set(migrated._read(_kept)[0]) == {"alice", "carol"}


def test_small_segments_and_a_reused_rowid_keep_statistics_and_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches cut into segments of 7 memories rank as one segment of everything: rewrites and deletes reach
    the one segment of each memory, and a memory given the rowid of a deleted one (SQLite reuses the highest)
    is indexed under its own postings only."""
    one, cut = SQLiteStore(tmp_path / "one.db"), SQLiteStore(tmp_path / "cut.db")
    try:
        records = _records("alice", TEXTS[:100])
        one.save("alice", records)
        monkeypatch.setattr(sqlite_keyword, "SEGMENT_MEMORIES", 7)
        cut.save("alice", records)
        assert cut._read(lambda c: c.execute("SELECT segments FROM keyword_users").fetchone()[0]) == 15
        for store in (one, cut):
            store.save("alice", [r.evolve(content=r.content + " zebra crossing") for r in records[5:30:3]])
            store.delete("alice", [r.id for r in records[20:60:2]] + [records[-1].id])
        last = cut._read(lambda c: c.execute("SELECT max(rowid) FROM memories").fetchone()[0])
        newest = _records("alice", TEXTS[200:201], start=200)
        for store in (one, cut):
            store.delete("alice", [records[-2].id])
            store.save("alice", newest)
        assert cut._read(lambda c: c.execute("SELECT max(rowid) FROM memories").fetchone()[0]) == last
        _assert_exact(cut)
        assert cut._read(_kept) == one._read(_kept)
        _assert_same_rankings(cut, one, [*QUERIES, "zebra crossing"])
    finally:
        one.close()
        cut.close()


@pytest.mark.parametrize("first_rowid", [2**40, 2**61])
def test_memories_of_large_rowids_rank_as_those_of_small_ones(tmp_path: Path, first_rowid: int) -> None:
    """A search passes the ranked rowids to SQL with their rank order packed in the same integer while
    they fit, as [rowid, rank] pairs past that: both give the ranking and scores of small rowids."""
    small, large = SQLiteStore(tmp_path / "small.db"), SQLiteStore(tmp_path / "large.db")
    try:
        records = _records("alice", TEXTS[:80])
        small.save("alice", records)
        placeholder = new_record(scope=Scope("bob"), content="placeholder")
        large.save("bob", [placeholder])
        large._conn.execute("UPDATE memories SET rowid = ? WHERE id = ?", (first_rowid - 1, placeholder.id))
        large.save("alice", records)  # rowids from first_rowid on
        assert (
            large._read(lambda c: c.execute("SELECT min(rowid) FROM memories WHERE user_id = 'alice'").fetchone())[0]
            == first_rowid
        )
        _assert_same_rankings(large, small, [*QUERIES, "the"])
    finally:
        small.close()
        large.close()


def test_a_rewrite_of_unchanged_text_computes_no_terms(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A supersession or metadata update writes the memory again with the text it had: its postings and
    statistics stay as they are, and its terms are not computed again."""
    records = _records("alice", TEXTS[:10])
    store.save("alice", records)
    kept = store._read(_kept)
    import memstrata.storage.sqlite as sqlite_module

    computed: list[str] = []
    monkeypatch.setattr(sqlite_module, "stored_terms", lambda user_id, *texts: computed.append(texts[0]))
    store.save("alice", [r.evolve(metadata={"seen": True}) for r in records])
    assert computed == [] and store._read(_kept) == kept


def test_one_user_alone_is_ranked_as_fts5_bm25_ranks(tmp_path: Path) -> None:
    """The reference: with one user in the store, the user's statistics are the whole table's, so the
    scores are FTS5's own bm25() over a table of the same columns (the user id included, unweighted)."""
    store = SQLiteStore(tmp_path / "one.db")
    records = _records("reader-1", TEXTS)
    store.save("reader-1", records)
    fts = sqlite3.connect(":memory:")
    columns = "id UNINDEXED, user_id, content, context, date_text"
    fts.execute(f"CREATE VIRTUAL TABLE t USING fts5({columns}, tokenize='porter unicode61')")
    rows = store._read(lambda c: c.execute("SELECT id, user_id, content, context, date_text FROM memories").fetchall())
    fts.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    compared = 0
    for query in QUERIES:
        match = fts_query(query)
        if match is None:
            continue
        rank = "bm25(t, 0, 0, 1.0, 0.5, 1.0)"  # id and user_id unweighted; content, context, date as the store
        expected = fts.execute(
            f"SELECT id, -{rank} FROM t WHERE t MATCH ? ORDER BY {rank} LIMIT 10", (match,)
        ).fetchall()
        got = store.keyword_search("reader-1", query, MemoryFilter(), limit=10)
        assert [h.score for h in got] == pytest.approx([s for _, s in expected], rel=1e-9), query
        for hit in got:  # tied memories may come in another order
            assert any(i == hit.record.id and s == pytest.approx(hit.score, rel=1e-9) for i, s in expected), query
        compared += 1
    assert compared >= 25
    store.close()


def test_a_batch_with_and_without_vectors_indexes_each_memory_under_its_own_row(store: SQLiteStore) -> None:
    """A save of several memories writes them in runs (with a vector, without one) and reads their rowids
    back: each memory's postings name its own row, a repeated id keeps one row, and the vectors given
    land on the memories they were given for."""
    records = _records("alice", TEXTS[:6])
    store.save("alice", records[:3], vectors=np.eye(3, 8, dtype=np.float32))
    rewritten = records[1].evolve(content="Quarry zebra crossing, rewritten")
    batch = [records[3], rewritten, records[4], records[5], rewritten.evolve(content="Quarry zebra, the last")]
    store.save("alice", batch, vectors=np.eye(2, 8, k=3, dtype=np.float32))  # vectors for the first two only
    _assert_exact(store)
    stored = dict(store._read(lambda c: c.execute("SELECT id, embedding FROM memories").fetchall()))
    assert np.frombuffer(stored[records[3].id], dtype=np.float32).argmax() == 3
    assert np.frombuffer(stored[records[1].id], dtype=np.float32).argmax() == 4  # the rewrite's vector
    assert stored[records[4].id] is None and stored[records[5].id] is None
    assert np.frombuffer(stored[records[0].id], dtype=np.float32).argmax() == 0
    hits = store.keyword_search("alice", "quarry zebra last", MemoryFilter(), limit=3)
    assert [h.record.content for h in hits][:1] == ["Quarry zebra, the last"]


def _assert_same_rankings(store: SQLiteStore, expected: SQLiteStore, queries: list[str]) -> None:
    """Alice's keyword top 20 of each query, ids and scores, are those of `expected`."""
    for query in queries:
        got = store.keyword_search("alice", query, MemoryFilter(), limit=20)
        want = expected.keyword_search("alice", query, MemoryFilter(), limit=20)
        assert [(h.record.id, h.score) for h in got] == [(h.record.id, h.score) for h in want], query
