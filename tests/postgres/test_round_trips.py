"""The reads of a search are pipelined: one round trip and one transaction per store call, and a
pooled connection never carries a user (or a setting) over to the next call, even after an error.

Round trips are counted at the protocol level: libpq's trace of the one pooled connection logs each
`Sync` message the client sends, and a pipeline sends one Sync per round trip.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from psycopg.pq import Trace

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import StoreError, UserErased
from memstrata.memory import Memory
from memstrata.models import MemoryRecord, Scope, new_record
from memstrata.settings import Settings
from memstrata.storage.base import MemoryFilter
from memstrata.storage.fence import fence
from memstrata.storage.postgres import PostgresStore
from tests.postgres.conftest import DIMENSIONS, EMBEDDER

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(DIMENSIONS)
ALICE, BOB = "alice", "bob"


@pytest.fixture
def one_connection(app_url: str, owner_url: str) -> Iterator[PostgresStore]:
    """A store whose pool holds exactly one connection: every call reuses it."""
    store = PostgresStore.open(app_url, owner_url=owner_url, pool_size=1)
    store.bind_embedder(EMBEDDER, DIMENSIONS)
    try:
        yield store
    finally:
        store.close()


def remember(store: PostgresStore, user: str, text: str) -> MemoryRecord:
    record = new_record(scope=Scope(user), content=text)
    store.save(user, [record], vectors=EMBED.embed_documents([text]))
    return record


@contextmanager
def protocol_trace(store: PostgresStore) -> Iterator[list[str]]:
    """The frontend messages (libpq trace lines starting with F) sent on the one pooled connection
    inside the block; the list is filled when the block ends."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace"
        with path.open("w") as sink:
            with store._pool.connection() as conn:
                conn.pgconn.trace(sink.fileno())
                conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
            yield lines
            with store._pool.connection() as conn:
                conn.pgconn.untrace()
        lines.extend(line for line in path.read_text().splitlines() if line.startswith("F"))


def syncs(lines: list[str]) -> int:
    return sum(1 for line in lines if "\tSync" in line)


def current_user_setting(store: PostgresStore) -> tuple[str | None, str]:
    with store.transaction(None) as cur:
        cur.execute("SELECT current_setting('app.user_id', true), current_setting('synchronous_commit')")
        row = cur.fetchone()
    assert row is not None
    return row[0], row[1]


def test_ef_search_is_raised_to_the_limit_never_lowered(one_connection: PostgresStore) -> None:
    relaxed = {"hnsw.iterative_scan": "relaxed_order"}  # per transaction too: on Citus only SET LOCAL reaches shards
    assert one_connection._hnsw_settings(50) == {"hnsw.ef_search": "50", **relaxed}
    assert one_connection._hnsw_settings(10) == {"hnsw.ef_search": "40", **relaxed}


def test_hybrid_candidates_is_one_round_trip_and_one_snapshot(one_connection: PostgresStore) -> None:
    store = one_connection
    jazz = remember(store, ALICE, "Alice bought jazz tickets")
    remember(store, BOB, "Bob bought jazz tickets too")
    with protocol_trace(store) as sent:
        semantic, keyword = store.hybrid_candidates(
            ALICE, EMBED.embed_query("jazz tickets"), "jazz tickets", MemoryFilter(), limit=5
        )
    assert [r.record.id for r in semantic] == [jazz.id] and [r.record.id for r in keyword] == [jazz.id]
    assert syncs(sent) == 1, sent
    statements = [line for line in sent if "\tParse\t" in line]
    assert "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" in statements[0], statements
    # begin, SET LOCAL user, ef_search, iterative_scan, vector, keyword, commit
    assert "COMMIT" in statements[-1] and len(statements) == 7, statements


@pytest.mark.parametrize("call", ["vector", "keyword", "access"])
def test_each_search_call_is_one_round_trip(one_connection: PostgresStore, call: str) -> None:
    store = one_connection
    record = remember(store, ALICE, "Alice bought jazz tickets")
    with protocol_trace(store) as sent:
        if call == "vector":
            store.vector_search(ALICE, EMBED.embed_query("jazz"), MemoryFilter(), limit=5)
        elif call == "keyword":
            store.keyword_search(ALICE, "jazz", MemoryFilter(), limit=5)
        else:
            store.record_access(ALICE, [record.id], datetime(2030, 1, 1, tzinfo=UTC))
    assert syncs(sent) == 1, sent


def test_access_is_recorded_and_its_lazy_commit_stays_in_its_transaction(one_connection: PostgresStore) -> None:
    store = one_connection
    record = remember(store, ALICE, "Alice bought jazz tickets")
    at = datetime(2030, 1, 1, tzinfo=UTC)
    store.record_access(ALICE, [record.id], at)
    [stored] = store.get(ALICE, [record.id])
    assert (stored.access_count, stored.last_accessed_at) == (1, at)
    assert current_user_setting(store) == ("", "on")


def test_a_user_never_carries_over_to_the_next_pooled_call(one_connection: PostgresStore) -> None:
    store = one_connection
    remember(store, ALICE, "Alice bought jazz tickets")
    store.hybrid_candidates(ALICE, EMBED.embed_query("jazz"), "jazz", MemoryFilter(), limit=100)
    assert current_user_setting(store)[0] == ""
    with store.transaction(None) as cur:  # ef_search was raised to the limit for that transaction only
        cur.execute("SELECT current_setting('hnsw.ef_search')")
        assert cur.fetchone() == ("40",)
    with store.transaction(None) as cur:
        cur.execute("SELECT count(*) FROM memories")
        assert cur.fetchone() == (0,)
    assert store.keyword_search(BOB, "jazz", MemoryFilter(), limit=5) == []
    assert store.vector_search(BOB, EMBED.embed_query("jazz"), MemoryFilter(), limit=5) == []


def test_a_failed_round_trip_is_rolled_back_before_the_connection_is_reused(one_connection: PostgresStore) -> None:
    store = one_connection
    remember(store, ALICE, "Alice bought jazz tickets")
    with pytest.raises(StoreError, match="division by zero"):
        store._round_trip(ALICE, [("SELECT count(*) FROM memories", []), ("SELECT 1 / 0", [])])
    with store._pool.connection() as conn:
        assert conn.info.transaction_status.name == "IDLE"
    assert current_user_setting(store) == ("", "on")
    assert [r.record.content for r in store.keyword_search(ALICE, "jazz", MemoryFilter(), limit=5)] == [
        "Alice bought jazz tickets"
    ]


def test_keyword_retries_bigger_batches_when_the_filter_rejects_a_full_batch(pg_store: PostgresStore) -> None:
    """70 matching rows, only the 5 oldest pass the filter: the first batch (64 best = newest, ranks
    being equal) holds none of them, so the store reads the next batch."""
    rows = [
        replace(
            new_record(scope=Scope(ALICE), content=f"jazz night {i}", metadata={"keep": i < 5}),
            created_at=datetime(2020, 1, 1, tzinfo=UTC) + timedelta(hours=i),
        )
        for i in range(70)
    ]
    pg_store.save(ALICE, rows)
    hits = pg_store.keyword_search(ALICE, "jazz", MemoryFilter(metadata={"keep": True}), limit=5)
    assert sorted(h.record.content for h in hits) == [f"jazz night {i}" for i in range(5)]


@pytest.mark.parametrize("call", ["get", "list", "count", "sessions", "history", "item", "items", "generation"])
def test_each_read_is_one_round_trip(one_connection: PostgresStore, call: str) -> None:
    """The reads a context() block makes (records, items, the erasure generation) pipeline BEGIN, the
    SET LOCAL, their statement and COMMIT: one Sync each, and the user does not carry over."""
    store = one_connection
    record = remember(store, ALICE, "Alice bought jazz tickets")
    store.put_item(ALICE, "profile", "city", {"value": "Lyon"})
    with protocol_trace(store) as sent:
        found: object = {
            "get": lambda: [r.id for r in store.get(ALICE, [record.id])],
            "list": lambda: [r.id for r in store.list_memories(ALICE, MemoryFilter())],
            "count": lambda: store.count_memories(ALICE, MemoryFilter()),
            "sessions": lambda: store.list_sessions(ALICE),
            "history": lambda: store.history(ALICE, record.id),
            "item": lambda: (item := store.get_item(ALICE, "profile", "city")) and item.value,
            "items": lambda: [i.key for i in store.list_items(ALICE, "profile")],
            "generation": lambda: store.erasure_generation(ALICE),
        }[call]()
    assert (
        found
        == {
            "get": [record.id],
            "list": [record.id],
            "count": 1,
            "sessions": [],
            "history": [],
            "item": {"value": "Lyon"},
            "items": ["city"],
            "generation": 0,
        }[call]
    )
    assert syncs(sent) == 1, sent
    assert current_user_setting(store) == ("", "on")
    assert store.get_item(BOB, "profile", "city") is None and store.count_memories(BOB, MemoryFilter()) == 0


@pytest.mark.parametrize("fenced", [False, True])
def test_an_item_write_is_one_round_trip_and_a_fenced_one_checks_the_generation_in_it(
    one_connection: PostgresStore, fenced: bool
) -> None:
    store = one_connection
    with fence(store, ALICE) if fenced else nullcontext():
        with protocol_trace(store) as sent:
            written = store.put_item(ALICE, "profile", "city", {"value": "Lyon"})
        assert syncs(sent) == 1, sent
        assert (written.value, store.get_item(ALICE, "profile", "city")) == ({"value": "Lyon"}, written)
        if fenced:
            store.erase_user(ALICE)  # as another process would, after this unit of work read the generation
            with pytest.raises(UserErased):
                store.put_item(ALICE, "profile", "city", {"value": "Paris"})
    # erased, and the refused write wrote nothing; unfenced, the item stays
    assert store.get_item(ALICE, "profile", "city") == (None if fenced else written)
    assert current_user_setting(store) == ("", "on")


def test_a_message_is_two_round_trips_and_the_turn_count_more_every_n_turns(
    one_connection: PostgresStore,
) -> None:
    """`Memory.add_message` on PostgreSQL, a session already under way: the erasure generation read once for
    the message and its turn count (one unit of work) and the `memstrata_save` call; the turn count is kept
    in the process (`turn_tally`) and its state read and written on every `consolidate_every_turns`-th
    turn only."""
    store = one_connection
    scope = Scope(ALICE, session_id="s1")
    settings = Settings(llm=None, buffer="memory://", consolidate_every_turns=3)
    with Memory(store=store, embedder=EMBED, settings=settings) as memory:
        memory.add_message("user", "I bought jazz tickets", scope=scope)
        with protocol_trace(store) as sent:
            memory.add_message("user", "the concert is on Friday", scope=scope)
        assert syncs(sent) == 2, [line for line in sent if "\tParse\t" in line]
        with protocol_trace(store) as sent:
            memory.add_message("user", "I will bring my sister", scope=scope)  # the third turn
        # and the state's read and write, and the consolidation job it queues
        assert syncs(sent) == 5, [line for line in sent if "\tParse\t" in line]
        turns = memory.recent_turns(scope=scope)
    assert [t.content for t in turns] == ["I bought jazz tickets", "the concert is on Friday", "I will bring my sister"]


def test_a_context_call_is_one_round_trip_of_reads_then_one_per_search(one_connection: PostgresStore) -> None:
    """`Memory.context` on PostgreSQL, in a session under way: the reads that wait on nothing (erasure
    generation, user context, profile, session state, entities, known names, the look-ups of what kinds of
    memory the user has) go in one `read_many`, then each search that can find something is one round trip:
    the episodes' only while the user has no learned memory, the learned memories' too once they do."""
    store = one_connection
    scope = Scope(ALICE, session_id="s1")
    settings = Settings(llm=None, buffer="memory://")
    with Memory(store=store, embedder=EMBED, settings=settings, track_access=False) as memory:
        memory.add_message("user", "I bought jazz tickets for Friday", scope=scope)
        memory.add_message("user", "The concert is in Lyon", scope=scope)
        memory.context("Which concert did I buy tickets for?", scope=scope)  # the turn tally and buffers settle
        with protocol_trace(store) as sent:
            episodes_only = memory.context("Which concert did I buy tickets for?", scope=scope)
        assert syncs(sent) == 2, [line for line in sent if "\tParse\t" in line]
        memory.add("Alice loves jazz", scope=Scope(ALICE), kind="preference")
        with protocol_trace(store) as sent:
            both = memory.context("Which concert did I buy tickets for?", scope=scope)
        assert syncs(sent) == 3, [line for line in sent if "\tParse\t" in line]
    assert "jazz tickets" in episodes_only.text and "Alice loves jazz" in both.text
