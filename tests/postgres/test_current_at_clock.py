""" "Current at time T" is one rule (`storage.base.current_at_sql`), judged at the caller's clock on every
store and in the SQL functions: with a clock decades from the wall clock, SQLite, PostgreSQL and the
RPC functions `match_memories` / `hybrid_memory_search` (given that clock's time as `as_of`) return the
same memories."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pgvector.psycopg import register_vector

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import EventType, MemoryRecord, Scope, new_event, new_record
from memstrata.settings import Settings
from memstrata.storage.base import MemoryFilter, Store
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.keyword import search_terms
from memstrata.storage.sqlite import SQLiteStore
from tests.support.pg import set_user

from .conftest import DIMENSIONS, EMBEDDER

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(DIMENSIONS)
FAR = datetime(2091, 6, 1, 12, 0, tzinfo=UTC)
"""The injected clock: long after the wall clock, so a rule judged at the server's now() differs."""
DAY, HOUR = timedelta(days=1), timedelta(hours=1)
STATED = {
    "Alice lives in Lisbon since last year": {"valid_from": FAR - 300 * DAY},
    "Alice lived in Paris until an hour ago": {"valid_from": FAR - 900 * DAY, "valid_to": FAR - HOUR},
    "Alice's Paris parking pass expired an hour ago": {"expires_at": FAR - HOUR},
    "Alice will live in Oslo from tomorrow": {"valid_from": FAR + DAY},
    "Alice likes Paris in spring": {},
}


def holds_at(record: MemoryRecord, at: datetime) -> bool:
    """The rule, stated on one record: valid at `at`, not yet superseded, not expired."""
    return (
        (record.valid_from is None or record.valid_from <= at)
        and (record.valid_to is None or record.valid_to > at)
        and (record.expires_at is None or record.expires_at > at)
    )


def fill(store: Store) -> dict[str, MemoryRecord]:
    stored = {}
    for text, times in STATED.items():
        record = new_record(scope=Scope("alice"), content=text, created_at=FAR - 1000 * DAY).evolve(**times)
        store.save("alice", [record], [new_event(record, EventType.ADD, after=text)], EMBED.embed_documents([text]))
        stored[record.id] = record
    return stored


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "memories.db")
    store.bind_embedder(EMBEDDER, DIMENSIONS)
    try:
        yield store
    finally:
        store.close()


def call(conn: psycopg.Connection[Any], query: str, params: list[Any]) -> set[str]:
    register_vector(conn)
    with conn.transaction():
        set_user(conn, "alice")
        return {row[0] for row in conn.execute(query, params).fetchall()}


def test_the_sql_functions_judge_currency_at_the_callers_clock(
    pg_store: PostgresStore, sqlite_store: SQLiteStore, app_conn: psycopg.Connection[Any]
) -> None:
    stored = fill(pg_store)
    fill(sqlite_store)
    expected = {r.content for r in stored.values() if holds_at(r, FAR)}
    assert 0 < len(expected) < len(STATED)  # the clock tells some apart
    vector = EMBED.embed_query("where does Alice live, Paris?")
    where = MemoryFilter(as_of=FAR)
    for store in (pg_store, sqlite_store):
        assert {row.record.content for row in store.vector_search("alice", vector, where, limit=50)} == expected
    matched = call(app_conn, "SELECT id FROM match_memories(%s, -1, 50, 'alice', %s)", [vector, FAR])
    terms = search_terms("alice", "Alice Paris Lisbon Oslo")
    hybrid = call(app_conn, "SELECT id FROM hybrid_memory_search(%s, %s, 'alice', 50, %s)", [terms, vector, FAR])
    assert {stored[i].content for i in matched} == {stored[i].content for i in hybrid} == expected


def test_without_as_of_the_sql_functions_use_the_server_clock(
    pg_store: PostgresStore, app_conn: psycopg.Connection[Any]
) -> None:
    stored = fill(pg_store)
    now = datetime.now(UTC)
    vector = EMBED.embed_query("Paris")
    matched = call(app_conn, "SELECT id FROM match_memories(%s, -1, 50, 'alice')", [vector])
    assert matched == {i for i, r in stored.items() if holds_at(r, now)}


def test_memory_with_a_far_clock_finds_the_same_on_both_stores(
    pg_store: PostgresStore, sqlite_store: SQLiteStore
) -> None:
    found = []
    for store in (pg_store, sqlite_store):
        fill(store)
        settings = Settings(llm=None, buffer="memory://")
        with Memory(store=store, embedder=EMBED, clock=lambda: FAR, settings=settings) as memory:
            found.append({h.memory.content for h in memory.search("where does Alice live?", scope="alice", k=50)})
    assert found[0] == found[1] == {t for t, times in STATED.items() if holds_at(_record(times), FAR)}


def _record(times: dict[str, datetime]) -> MemoryRecord:
    return new_record(scope=Scope("alice"), content="-").evolve(**times)
