"""The SQL functions `match_memories` and `hybrid_memory_search`, called directly as the app role the
way a Supabase RPC client would, agree with the store's own searches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from pgvector.psycopg import register_vector

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import EventType, MemoryRecord, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.keyword import search_terms
from tests.support.pg import set_user

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(64)
TEXTS = [
    "Alice drinks green tea every morning",
    "Alice's manager Sarah prefers email over calls",
    "the green car needs new tyres before winter",
    "tea ceremony lessons on Saturday in Kyoto",
    "Alice is allergic to peanuts",
    "jasmine tea with honey helps her sleep",
    "morning runs along the river, 5 km",
]


def remember(store: PostgresStore, user: str, text: str, **fields: Any) -> MemoryRecord:
    record = new_record(scope=Scope(user), content=text)
    if fields:
        record = record.evolve(**fields)
    store.save(user, [record], [new_event(record, EventType.ADD, after=text)], EMBED.embed_documents([text]))
    return record


@pytest.fixture
def corpus(pg_store: PostgresStore) -> dict[str, MemoryRecord]:
    records = {text: remember(pg_store, "alice", text) for text in TEXTS}
    remember(pg_store, "bob", "Bob drinks green tea too")
    return records


@pytest.fixture
def rpc(app_conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    register_vector(app_conn)
    return app_conn


def call(conn: psycopg.Connection[Any], user: str | None, query: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with conn.transaction():
        if user is not None:
            set_user(conn, user)
        return conn.execute(query, params).fetchall()


@pytest.mark.parametrize("query", ["green tea in the morning", "peanut allergy", "Sarah email"])
def test_match_memories_equals_store_vector_search(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any], query: str
) -> None:
    vector = EMBED.embed_query(query)
    expected = pg_store.vector_search("alice", vector, MemoryFilter(), limit=5)
    rows = call(rpc, "alice", "SELECT * FROM match_memories(%s, -1.0, 5, 'alice')", [vector])
    assert [r[0] for r in rows] == [h.record.id for h in expected]
    assert [r[3] for r in rows] == pytest.approx([h.score for h in expected], abs=1e-6)
    assert [r[1] for r in rows] == [h.record.content for h in expected]
    # p_user_id defaults to the transaction's user
    assert call(rpc, "alice", "SELECT * FROM match_memories(%s, -1.0, 5)", [vector]) == rows


def test_match_memories_threshold_and_defaults(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any]
) -> None:
    vector = EMBED.embed_query("Alice drinks green tea every morning")
    rows = call(rpc, "alice", "SELECT id, similarity FROM match_memories(%s)", [vector])  # 0.7, 5
    assert [r[0] for r in rows] == [corpus["Alice drinks green tea every morning"].id]
    assert rows[0][1] == pytest.approx(1.0, abs=1e-5)
    every = call(rpc, "alice", "SELECT similarity FROM match_memories(%s, 0.0, 100)", [vector])
    assert every and all(s >= 0.0 for (s,) in every)
    assert [s for (s,) in every] == sorted((s for (s,) in every), reverse=True)


def test_match_memories_returns_only_current_memories(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any]
) -> None:
    now = datetime.now(UTC)
    old = remember(pg_store, "alice", "Alice lives in Paris", valid_to=now - timedelta(days=1))
    gone = remember(pg_store, "alice", "Alice lives in Paris temporarily", expires_at=now - timedelta(hours=1))
    later = remember(pg_store, "alice", "Alice lives in Paris soon", valid_from=now + timedelta(days=1))
    ids = {r[0] for r in call(rpc, "alice", "SELECT id FROM match_memories(%s, -1, 50)", [EMBED.embed_query("Paris")])}
    assert not ids & {old.id, gone.id, later.id}
    assert len(ids) == len(TEXTS)


@pytest.mark.parametrize("query", ["green tea morning", "tea", "peanuts Sarah", "winter tyres for the car"])
def test_hybrid_memory_search_scores_and_ranks_exactly(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any], query: str
) -> None:
    vector = EMBED.embed_query(query)
    terms = search_terms("alice", query)
    rows = call(rpc, "alice", "SELECT * FROM hybrid_memory_search(%s, %s, 'alice', 4)", [terms, vector])
    # brute force over every current row of the user: 0.7 * cosine + 0.3 * BM25 / the best BM25 (0 when no match)
    similarity = {h.record.id: h.score for h in pg_store.vector_search("alice", vector, MemoryFilter(), limit=100)}
    rank = {h.record.id: h.score for h in pg_store.keyword_search("alice", query, MemoryFilter(), limit=100)}
    best_rank = max(rank.values())
    brute = {i: 0.7 * s + 0.3 * rank.get(i, 0.0) / best_rank for i, s in similarity.items()}
    best = sorted(brute.values(), reverse=True)[:4]
    assert [r[2] for r in rows] == pytest.approx(best, abs=1e-6)  # the top-4 scores (ties may swap ids)
    assert all(brute[r[0]] == pytest.approx(r[2], abs=1e-6) for r in rows)
    assert all(r[1] == next(c.content for c in corpus.values() if c.id == r[0]) for r in rows)


def test_hybrid_memory_search_stays_inside_rls(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any]
) -> None:
    vector = EMBED.embed_query("green tea")
    query = "SELECT id FROM hybrid_memory_search(ARRAY['green', 'tea'], %s, %s, 10)"
    assert len(call(rpc, "bob", query, [vector, "bob"])) == 1
    assert call(rpc, "bob", query, [vector, "alice"]) == []
    assert call(rpc, None, query, [vector, "alice"]) == []


def test_hybrid_memory_search_without_terms_is_pure_vector(
    pg_store: PostgresStore, corpus: dict[str, MemoryRecord], rpc: psycopg.Connection[Any]
) -> None:
    vector = EMBED.embed_query("green tea")
    terms = search_terms("alice", "the of and")
    assert terms == []  # a query of stopwords looks nothing up
    rows = call(
        rpc, "alice", "SELECT id, combined_score FROM hybrid_memory_search(%s, %s, 'alice', 3)", [terms, vector]
    )
    nearest = pg_store.vector_search("alice", vector, MemoryFilter(), limit=3)
    assert [r[1] for r in rows] == pytest.approx([0.7 * h.score for h in nearest], abs=1e-6)
    assert rows[0][0] == nearest[0].record.id
