"""PostgreSQL ranks keyword matches exactly as the SQLite store (both: FTS5's bm25() over the user's own
statistics; tests/unit/test_sqlite_keyword.py checks SQLite against FTS5 itself).

The corpus is real text nobody here wrote: paragraphs of the standard library's docstrings, each
with a context (the paragraph before it) and a creation date, the way conversation turns are stored.
The queries are sentences of the same docstrings, so they share common and rare words with it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata.models import MemoryRecord, Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.postgres

_MODULES = ("json", "csv", "logging", "pathlib", "argparse", "datetime", "collections", "sqlite3", "zipfile")
USER = "reader-1"


def _paragraphs() -> list[str]:
    texts: list[str] = []
    for name in _MODULES:
        module = importlib.import_module(name)
        for key, member in sorted(vars(module).items()):
            if key.startswith("_") or not callable(member):
                continue
            doc = inspect.getdoc(member) or ""
            texts.extend(p.strip() for p in doc.split("\n\n") if 20 < len(p.strip()) < 1500)
    return list(dict.fromkeys(texts))[:400]


def _records(texts: list[str]) -> list[MemoryRecord]:
    start = datetime(2023, 1, 1, tzinfo=UTC)
    records = []
    for number, text in enumerate(texts):
        record = new_record(scope=Scope(USER), content=text)
        at = start + timedelta(days=number // 7)
        records.append(record.evolve(context=texts[number - 1] if number else "", created_at=at, updated_at=at))
    return records


def _queries(texts: list[str]) -> list[str]:
    sentences = [s.strip() for t in texts[::4] for s in t.split(". ") if 3 <= len(s.split()) <= 12]
    return sentences[:40] + ["Python's json module", "what's the logger's level?", "8 January 2023", "zip"]


@pytest.fixture
def stores(pg_store: PostgresStore, tmp_path: Path) -> Iterator[tuple[SQLiteStore, PostgresStore, list[str]]]:
    sqlite = SQLiteStore(tmp_path / "reference.db")
    texts = _paragraphs()
    records = _records(texts)
    for store in (sqlite, pg_store):
        for start in range(0, len(records), 100):
            store.save(USER, records[start : start + 100])
    try:
        yield sqlite, pg_store, _queries(texts)
    finally:
        sqlite.close()


def test_same_top_10_and_scores_as_sqlite(stores: tuple[SQLiteStore, PostgresStore, list[str]]) -> None:
    sqlite, postgres, queries = stores
    assert len(queries) >= 30
    for query in queries:
        _assert_same_top_10(sqlite, postgres, query)


def test_statistics_follow_updates_and_deletes(stores: tuple[SQLiteStore, PostgresStore, list[str]]) -> None:
    """After rewriting and deleting memories, both stores still agree (the per-user statistics are
    kept in the write transactions), and a memory's old words no longer find it."""
    sqlite, postgres, queries = stores
    listed = postgres.list_memories(USER, MemoryFilter(), limit=60)
    rewritten = [r.evolve(content=f"Zebra crossing number {i} near the quarry") for i, r in enumerate(listed[:30])]
    gone = [r.id for r in listed[30:60]]
    for store in (sqlite, postgres):
        store.save(USER, rewritten)
        store.delete(USER, gone)
    for query in [*queries[:15], "zebra quarry"]:
        got = _assert_same_top_10(sqlite, postgres, query)
        assert not set(got) & set(gone)
    assert set(_assert_same_top_10(sqlite, postgres, "zebra quarry")) <= {r.id for r in rewritten}


def _assert_same_top_10(sqlite: SQLiteStore, postgres: PostgresStore, query: str) -> list[str]:
    """The same 10 scores, and each of PostgreSQL's hits one SQLite ranks with the same score (tied
    memories may come in another order, or be cut at the 10th place differently); its ids."""
    expected = sqlite.keyword_search(USER, query, MemoryFilter(), limit=50)
    got = postgres.keyword_search(USER, query, MemoryFilter(), limit=10)
    assert [h.score for h in got] == pytest.approx([h.score for h in expected[:10]], rel=1e-6), query
    for hit in got:
        tied = {h.record.id for h in expected if h.score == pytest.approx(hit.score, rel=1e-6)}
        assert hit.record.id in tied, query
    return [h.record.id for h in got]
