"""Migration 9 on a database at migration 8: existing memories get their terms and statistics, and
then rank exactly as the SQLite store ranks the same memories."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from memstrata.core.keyword_index import memory_terms
from memstrata.core.keyword_statistics import statistics_change
from memstrata.models import MemoryRecord, Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore, migrations
from memstrata.storage.sqlite import SQLiteStore
from tests.support.pg import postgres_urls

pytestmark = pytest.mark.postgres

USERS = ("ana", "ben")
_V8_INSERT = (
    "INSERT INTO memories (user_id, id, kind, content, context, date_text, created_at, updated_at, content_hash) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def _corpus() -> dict[str, list[MemoryRecord]]:
    texts = [
        p.strip()
        for member in vars(importlib.import_module("argparse")).values()
        if callable(member)
        for p in (inspect.getdoc(member) or "").split("\n\n")
        if len(p.strip()) > 20
    ]
    start = datetime(2024, 3, 1, tzinfo=UTC)
    corpus: dict[str, list[MemoryRecord]] = {}
    for number, text in enumerate(dict.fromkeys(texts)):
        user = USERS[number % 2]
        at = start + timedelta(hours=5 * number)
        record = new_record(scope=Scope(user), content=text).evolve(context=texts[number - 1], created_at=at)
        corpus.setdefault(user, []).append(record)
    return corpus


@pytest.fixture
def version_8() -> Iterator[tuple[str, str, dict[str, list[MemoryRecord]]]]:
    """A database migrated to version 8 holding memories written as version 8 wrote them."""
    corpus = _corpus()
    with postgres_urls() as (app_url, owner_url):
        with psycopg.connect(owner_url, autocommit=True) as owner:
            assert migrations.migrate(owner, target=8) == 8
            with owner.transaction():
                for user, records in corpus.items():
                    owner.execute("SELECT set_config('app.user_id', %s, true)", [user])
                    for r in records:
                        owner.execute(
                            _V8_INSERT,
                            [
                                user,
                                r.id,
                                r.kind.value,
                                r.content,
                                r.context,
                                "",
                                r.created_at,
                                r.updated_at,
                                r.content_hash,
                            ],
                        )
        yield app_url, owner_url, corpus


def test_upgrade_indexes_existing_memories(
    version_8: tuple[str, str, dict[str, list[MemoryRecord]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_url, owner_url, corpus = version_8
    monkeypatch.setattr(migrations, "BACKFILL_BATCH", 7)  # several batches, users split across them
    store = PostgresStore.open(app_url, owner_url=owner_url)
    try:
        with psycopg.connect(owner_url, autocommit=True) as owner:
            assert owner.execute("SELECT max(version) FROM schema_migrations").fetchone() == (migrations.LATEST,)
            query = "SELECT attname FROM pg_attribute WHERE attrelid = 'memories'::regclass AND NOT attisdropped"
            columns = {r[0] for r in owner.execute(query).fetchall()}
            assert "tsv" not in columns and "keyword_terms" in columns
        for user, records in corpus.items():
            assert _statistics(store, user) == _expected_statistics(user, records)
            sqlite = SQLiteStore(tmp_path / f"{user}.db")  # one user per file: the same statistics
            try:
                sqlite.save(user, records)
                _assert_same_scores(sqlite, store, user)
            finally:
                sqlite.close()
    finally:
        store.close()


def _assert_same_scores(sqlite: SQLiteStore, store: PostgresStore, user: str) -> None:
    for query in ("positional arguments", "the parser's help message", "March 2024", "argument"):
        expected = sqlite.keyword_search(user, query, MemoryFilter(), limit=10)
        got = store.keyword_search(user, query, MemoryFilter(), limit=10)
        assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-6), query
        assert got, query


def _statistics(store: PostgresStore, user: str) -> tuple[tuple[int, int], dict[str, int]]:
    with store.transaction(user) as cur:
        cur.execute("SELECT documents, tokens FROM keyword_totals WHERE user_id = %s", [user])
        totals = cur.fetchone()
        cur.execute("SELECT term, documents FROM keyword_documents WHERE user_id = %s", [user])
        return (int(totals[0]), int(totals[1])) if totals else (0, 0), dict(cur.fetchall())


def _expected_statistics(user: str, records: list[MemoryRecord]) -> tuple[tuple[int, int], dict[str, int]]:
    indexed = [memory_terms(user, r) for r in records]
    change = statistics_change((), ((list(t.frequencies), t.length) for t in indexed))
    return (change.memories, change.tokens), change.documents
