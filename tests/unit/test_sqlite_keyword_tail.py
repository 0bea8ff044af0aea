"""The SQLite keyword index's tail (`sqlite_keyword.TAIL_ROWS`): memories written one at a time keep their
postings in `keyword_recent` until a merge, and that changes neither the statistics nor any score.

The corpus is real text nobody here wrote (the standard library's docstrings, as in test_sqlite_keyword),
each paragraph with the one before it as context, the way conversation turns are stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.storage import open_store
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore
from memstrata.storage.sqlite_keyword import TAIL_ROWS

from .test_sqlite_keyword import QUERIES, TEXTS, _assert_exact, _kept, _records


@pytest.fixture(params=["sqlite", "sqlcipher"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    key = "keyword-tail key" if request.param == "sqlcipher" else None
    stores = [open_store(tmp_path / f"{name}.db", key=key) for name in ("batch", "single")]
    assert all(isinstance(s, SQLiteStore) for s in stores)
    try:
        yield stores[0], stores[1]  # type: ignore[return-value]
    finally:
        for s in stores:
            s.close()


def _scores(store: SQLiteStore, user_id: str) -> dict[str, dict[str, float]]:
    return {
        query: {hit.record.id: hit.score for hit in store.keyword_search(user_id, query, MemoryFilter(), limit=1000)}
        for query in QUERIES
    }


def test_single_writes_keep_the_statistics_and_scores_of_one_batch(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    batch, single = pair
    records = _records("alice", TEXTS)
    batch.save("alice", records)  # one write of every posting: straight into keyword_postings
    tails = []
    for record in records:  # one memory a write: through the tail, merged whenever it fills
        single.save("alice", [record])
        tails.append(single._read(lambda c: c.execute("SELECT count(*) FROM keyword_recent").fetchone()[0]))
    assert max(tails) <= TAIL_ROWS
    assert any(later < earlier for earlier, later in zip(tails, tails[1:], strict=False))  # merges happened
    assert tails[-1] > 0  # and the last memories are still in the tail
    assert single._read(_kept) == batch._read(_kept)
    _assert_exact(single)
    rowids = {r.id: n for n, r in enumerate(records)}
    got, expected = _scores(single, "alice"), _scores(batch, "alice")
    assert sum(len(hits) for hits in expected.values()) > 100
    for query in QUERIES:
        assert got[query].keys() == expected[query].keys(), query
        for memory_id, score in expected[query].items():
            assert got[query][memory_id] == pytest.approx(score, abs=1e-9), (query, rowids[memory_id])


def test_rewrites_and_deletes_reach_both_tables(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    batch, single = pair
    records = _records("alice", TEXTS[:120])
    for record in records:
        single.save("alice", [record])
    # memories whose postings were merged long ago, and the newest, still in the tail
    old_and_new = [records[3], records[40], records[-2], records[-1]]
    rewritten = [r.evolve(content=r.content + " rewritten zebra") for r in old_and_new]
    single.save("alice", rewritten[:2])
    single.save("alice", rewritten[2:3])
    single.delete("alice", [records[10].id, records[-1].id, records[-5].id])
    _assert_exact(single)
    kept = [r for r in records if r.id not in {records[10].id, records[-1].id, records[-5].id}]
    by_id = {r.id: r for r in rewritten[:3]}
    batch.save("alice", [by_id.get(r.id, r) for r in kept])
    for query in [*QUERIES[:10], "rewritten zebra"]:
        got = {h.record.id: h.score for h in single.keyword_search("alice", query, MemoryFilter(), limit=1000)}
        expected = {h.record.id: h.score for h in batch.keyword_search("alice", query, MemoryFilter(), limit=1000)}
        assert got.keys() == expected.keys()
        assert all(got[i] == pytest.approx(s, abs=1e-9) for i, s in expected.items())
    single.delete("alice", [r.id for r in kept])  # the last memory gone: nothing of the user is left
    assert single._read(_kept) == ({}, {}, {})


def test_a_one_memory_write_dirties_few_pages(tmp_path: Path) -> None:
    """A memory's postings are appended side by side in the tail instead of one b-tree page per term:
    a one-memory write to a user of 200 memories wrote ~31 WAL pages a write when postings went straight
    to keyword_postings (`TAIL_ROWS` 0), and ~11 with the tail (over 30 writes, merges included)."""
    store = open_store(tmp_path / "m.db")
    assert isinstance(store, SQLiteStore)
    try:
        records = _records("alice", TEXTS[:230])
        store.save("alice", records[:200])
        conn = store._conn
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        wal = Path(f"{tmp_path / 'm.db'}-wal")
        start = wal.stat().st_size if wal.exists() else 0
        for record in records[200:]:
            store.save("alice", [record])
        pages = (wal.stat().st_size - start) / (4096 + 24) / len(records[200:])
        assert pages < 20
    finally:
        store.close()
