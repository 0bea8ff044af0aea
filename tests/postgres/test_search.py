"""Search semantics shared with the SQLite reference store, and the keyword batch retry."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import MemoryKind, MemoryRecord, Scope, new_record
from memstrata.storage.base import MemoryFilter, Store
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.sql_functions import COMMON_WORD_ROWS
from memstrata.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(64)
TEXTS = [
    "Alice runs marathons every spring",
    "She ran her first marathon in Berlin",
    "Bob bakes sourdough bread on Sundays",
    "The bakery on Main Street sells baked goods",
    "Meeting with Sarah about the quarterly budget",
    "Sarah's budget meetings are always on Mondays",
    "Remind me to call the dentist next week",
    "Alice is allergic to peanuts and shellfish",
    "Flight to Tokyo leaves at 9:45 from gate 12",
    "Her daughter's name is Emma, she is 7 years old",
    "Prefers jasmine tea over coffee in the evening",
    "Coffee beans from Ethiopia taste fruity",
    "Planning a trip to Kyoto in April 2026",
    "user's favourite colour is dark green",
]
QUERIES = [
    "running a marathon?",
    "baking bread",
    "budget meeting with Sarah",
    "dentist appointment",
    "peanut allergy",
    "Tokyo flight gate",
    "Emma age",
    "tea or coffee",
    "trip to Kyoto 2026",
    "green colour",
    "what does she like",
    "the and of",
    "' OR 1=1 --",
]


@pytest.fixture
def both(pg_store: PostgresStore, tmp_path: Path) -> Iterator[tuple[Store, Store, dict[str, str]]]:
    """The same corpus in both stores (same ids); yields (sqlite, postgres, id -> text)."""
    sqlite = SQLiteStore(tmp_path / "reference.db")
    sqlite.bind_embedder("hashing-64", 64)
    records = [new_record(scope=Scope("alice"), content=text) for text in TEXTS]
    vectors = EMBED.embed_documents(TEXTS)
    for store in (sqlite, pg_store):
        store.save("alice", records, [], vectors)
    try:
        yield sqlite, pg_store, {r.id: r.content for r in records}
    finally:
        sqlite.close()


@pytest.mark.parametrize("query", QUERIES)
def test_keyword_search_matches_the_same_memories_as_sqlite(
    both: tuple[Store, Store, dict[str, str]], query: str
) -> None:
    sqlite, postgres, texts = both
    expected = {h.record.id for h in sqlite.keyword_search("alice", query, MemoryFilter(), limit=50)}
    got = postgres.keyword_search("alice", query, MemoryFilter(), limit=50)
    assert {h.record.id for h in got} == expected, (query, sorted(texts[i] for i in expected))
    assert all(h.score > 0 for h in got)
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)


@pytest.mark.parametrize("query", QUERIES)
def test_vector_search_equals_sqlite(both: tuple[Store, Store, dict[str, str]], query: str) -> None:
    sqlite, postgres, _ = both
    vector = EMBED.embed_query(query)
    expected = sqlite.vector_search("alice", vector, MemoryFilter(), limit=5)
    got = postgres.vector_search("alice", vector, MemoryFilter(), limit=5)
    assert [h.score for h in got] == pytest.approx([h.score for h in expected], abs=1e-5)


def remember_many(store: PostgresStore, texts: list[tuple[str, MemoryKind]]) -> list[MemoryRecord]:
    records = [new_record(scope=Scope("alice"), content=text, kind=kind) for text, kind in texts]
    store.save("alice", records, [], EMBED.embed_documents([t for t, _ in texts]))
    return records


def test_keyword_filter_reaching_deep_into_the_ranking_still_finds_every_match(
    pg_store: PostgresStore,
) -> None:
    """The best 64 matches are all facts; the notes rank below them: the search asks for more."""
    facts = [(f"jazz jazz jazz concert number {i}", MemoryKind.FACT) for i in range(150)]
    notes = [
        (f"a long note about many things, among them some jazz records, item {i}", MemoryKind.NOTE) for i in range(3)
    ]
    records = remember_many(pg_store, facts + notes)
    got = pg_store.keyword_search("alice", "jazz", MemoryFilter(kinds=(MemoryKind.NOTE,)), limit=5)
    assert {h.record.id for h in got} == {r.id for r in records[-3:]}
    top = pg_store.keyword_search("alice", "jazz", MemoryFilter(), limit=5)
    assert len(top) == 5 and all(h.record.kind is MemoryKind.FACT for h in top)
    assert len(pg_store.keyword_search("alice", "jazz", MemoryFilter(), limit=500)) == 153


def test_context_and_date_are_searchable_like_in_sqlite(pg_store: PostgresStore, tmp_path: Path) -> None:
    """Keyword search also reads the record's `context` (weight 0.5) and its date written out."""
    sqlite = SQLiteStore(tmp_path / "reference.db")
    when = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
    alice = Scope("alice")
    reply = new_record(
        scope=alice, content="Yes, we won a trophy!", context="Did your team win the final?", created_at=when
    )
    direct = new_record(scope=Scope("alice"), content="The team lost the final in June", created_at=when)
    later = new_record(
        scope=Scope("alice"), content="Dinner with the team", created_at=datetime(2024, 1, 2, tzinfo=UTC)
    )
    try:
        for store in (sqlite, pg_store):
            store.save("alice", [reply, direct, later], [], EMBED.embed_documents(["a", "b", "c"]))
            [got] = store.get("alice", [reply.id])
            assert got.context == reply.context
            hits = store.keyword_search("alice", "team final", MemoryFilter(), limit=5)
            found = [h.record.id for h in hits]
            assert found[0] == direct.id and reply.id in found, store.url  # found through its context
            dated = store.keyword_search("alice", "8 May 2023", MemoryFilter(), limit=5)
            assert {h.record.id for h in dated} == {reply.id, direct.id}, store.url
    finally:
        sqlite.close()


def test_a_word_common_for_the_user_weighs_little_against_a_rare_one(pg_store: PostgresStore) -> None:
    """BM25 with the user's own statistics: 'weather' is in most of the user's memories (IDF near 0),
    'picnic' in two. Rows holding the rare word rank first; every match is still ranked; another
    user's statistics are their own."""
    texts = [f"weather report {i}" for i in range(COMMON_WORD_ROWS + 20)] + [
        "weather for the picnic",
        "picnic in the park",
        "umbrella and weather",
    ]
    pg_store.save("big", [new_record(scope=Scope("big"), content=t) for t in texts])
    pg_store.save("small", [new_record(scope=Scope("small"), content=t) for t in ("weather report", "picnic")])

    def found(user: str, query: str, limit: int = 500) -> list[str]:
        return [r.record.content for r in pg_store.keyword_search(user, query, MemoryFilter(), limit=limit)]

    big = found("big", "weather picnic")
    assert big[:2] == ["weather for the picnic", "picnic in the park"] and len(big) == len(texts)
    assert found("big", "umbrella")[0] == "umbrella and weather"
    assert set(found("small", "weather picnic")) == {"weather report", "picnic"}


def test_many_matches_without_a_common_word_are_all_ranked(pg_store: PostgresStore) -> None:
    """More matches in all than COMMON_WORD_ROWS, but no single word above it: nothing is pruned, and
    the ranking is the full one (rows holding two query words first)."""
    per_word = COMMON_WORD_ROWS // 2 + 10
    texts = [f"{word} entry {i}" for word in ("apple", "banana", "cherry") for i in range(per_word)]
    texts.append("apple and banana together")
    pg_store.save("big", [new_record(scope=Scope("big"), content=t) for t in texts])
    hits = pg_store.keyword_search("big", "apple banana cherry", MemoryFilter(), limit=1000)
    assert len(hits) == len(texts) > COMMON_WORD_ROWS
    assert hits[0].record.content == "apple and banana together" and hits[0].score > hits[1].score


@pytest.mark.parametrize(
    ("total", "documents"),
    [
        pytest.param(4999, {"a": 4000, "b": 3000, "c": 10}, id="small-user-looks-up-every-term"),
        pytest.param(10_000, {"a": 6000, "b": 3000, "c": 1500, "d": 10, "e": 0}, id="over-half-dropped-budget"),
        pytest.param(200_000, {"a": 7000, "b": 900, "c": 20, "d": 20}, id="budget-is-a-share-of-big-users"),
        pytest.param(10_000, {"a": 4500, "b": 4400}, id="the-rarest-is-always-kept"),
    ],
)
def test_terms_looked_up_follow_the_sqlite_keyword_plan(
    pg_store: PostgresStore, total: int, documents: dict[str, int]
) -> None:
    """Big users look up the same terms as SQLite's `keyword_plan` would for the same statistics
    (written directly here: a user of 200k memories is not loaded for it)."""
    from memstrata.core.bm25 import POSTING_BUDGET, keyword_plan

    terms = [*documents, "a"]  # a repeated term counts twice, as in FTS5
    with pg_store.transaction("big") as cur:
        cur.execute(
            "INSERT INTO keyword_totals (user_id, documents, tokens) VALUES ('big', %s, %s)", [total, total * 9]
        )
        for term, count in documents.items():
            if count:
                cur.execute("INSERT INTO keyword_documents VALUES ('big', %s, %s)", [term, count])
        cur.execute("SELECT term, idf, average_length FROM memstrata_bm25_terms('big', %s)", [terms])
        rows = cur.fetchall()
    expected = keyword_plan(terms, documents, total, budget=POSTING_BUDGET)
    assert sorted(r[0] for r in rows) == sorted(expected)
    for term, idf, average in rows:
        n = documents[term]
        assert idf == pytest.approx(max(math.log((total - n + 0.5) / (n + 0.5)), 0) or 1e-6) and average == 9
