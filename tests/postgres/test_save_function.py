"""`memstrata_save` (migration 13): a save's writes in one function call. Migration 13 upgrades a database
written by version 12, and the saves that follow keep the per-user BM25 statistics and the postings exactly
what the stored memories hold, also when they replace memories version 12 wrote. Migration 14 moves the write
fence into the call: it upgrades a database written by version 13, three-argument calls keep working, and a
fenced save whose user was erased since its unit of work began raises `UserErased` and writes nothing.
Migration 15 writes with static statements where Citus is not loaded: the same rows as migration 14."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg.types.composite import CompositeInfo, register_composite

from memstrata.core.keyword_statistics import statistics_change
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import UserErased
from memstrata.models import EventType, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.fence import fence
from memstrata.storage.postgres import PostgresStore, migrations
from memstrata.storage.postgres import queries as q
from memstrata.storage.postgres.keyword import postings_statements, row_terms, statistics_statements
from memstrata.storage.postgres.sql_functions import ERASED_SQLSTATE, M013_SAVE_SIGNATURE, M014_SAVE, SAVE_SIGNATURE
from tests.support.pg import postgres_urls

UPSERT_AS_VERSION_12 = (
    f"INSERT INTO memories ({', '.join(q.WRITE_COLUMNS)}) VALUES ({', '.join(['%s'] * len(q.WRITE_COLUMNS))}) "
    f"ON CONFLICT (user_id, id) DO UPDATE SET {', '.join(f'{c} = EXCLUDED.{c}' for c in q.WRITE_COLUMNS[2:])}"
)
"""One record's upsert (no vector), as saves wrote them before migration 13."""

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(64)
USER = "ana"


def stored_statistics(store: PostgresStore, user: str) -> tuple[tuple[int, int], dict[str, int], set[tuple[str, str]]]:
    """((memories, tokens), documents per term, postings) as the store keeps them for `user`."""
    with store.transaction(user) as cur:
        cur.execute("SELECT documents, tokens FROM keyword_totals WHERE user_id = %s", [user])
        totals = cur.fetchone() or (0, 0)
        cur.execute("SELECT term, documents FROM keyword_documents WHERE user_id = %s", [user])
        documents = dict(cur.fetchall())
        cur.execute("SELECT term, memory_id FROM keyword_postings WHERE user_id = %s", [user])
        postings = set(cur.fetchall())
    return (int(totals[0]), int(totals[1])), documents, postings


def recounted_statistics(
    store: PostgresStore, user: str
) -> tuple[tuple[int, int], dict[str, int], set[tuple[str, str]]]:
    """The same, recounted from the stored memories' own terms."""
    with store.transaction(user) as cur:
        cur.execute("SELECT id, keyword_terms, keyword_length FROM memories WHERE user_id = %s", [user])
        rows = cur.fetchall()
    documents = Counter(t for _, terms, _ in rows for t in set(terms))
    return (len(rows), sum(n for _, _, n in rows)), dict(documents), {(t, i) for i, terms, _ in rows for t in terms}


@pytest.fixture
def version_12() -> Iterator[tuple[str, str, list]]:
    """A database at version 12 holding two memories written the way version 12 wrote them."""
    records = [new_record(scope=Scope(USER), content=t) for t in ("green tea on Thursday", "the tea order moved")]
    with postgres_urls() as (app_url, owner_url):
        with psycopg.connect(owner_url, autocommit=True) as owner:
            assert migrations.migrate(owner, target=12) == 12
            with owner.transaction():
                owner.execute("SELECT set_config('app.user_id', %s, true)", [USER])
                terms = {r.id: row_terms(USER, r) for r in records}
                for r in records:
                    owner.execute(UPSERT_AS_VERSION_12, q.record_params(r, terms[r.id]))
                change = statistics_change((), ((list(t.frequencies), t.length) for t in terms.values()))
                for statement, params in [
                    *statistics_statements(USER, change),
                    *postings_statements(USER, (), terms.items()),
                ]:
                    owner.execute(statement, params)
        yield app_url, owner_url, records


def test_migration_13_upgrades_a_version_12_database_and_saves_keep_the_statistics(
    version_12: tuple[str, str, list],
) -> None:
    app_url, owner_url, (tea, order) = version_12
    with PostgresStore.open(app_url, owner_url=owner_url) as store:
        store.bind_embedder("hashing-64", 64)
        with psycopg.connect(owner_url) as owner:
            assert owner.execute("SELECT max(version) FROM schema_migrations").fetchone() == (migrations.LATEST,)
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)
        rewritten = replace(tea, content="black coffee on Friday")
        added = new_record(scope=Scope(USER), content="coffee beans ordered")
        store.save(
            USER,
            [rewritten, added, replace(added, content="coffee beans ordered twice")],  # a repeated id: the last wins
            [new_event(rewritten, EventType.UPDATE, before=tea.content, after=rewritten.content)],
            EMBED.embed_documents([rewritten.content, added.content]),
        )
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)
        assert sorted(r.content for r in store.list_memories(USER, MemoryFilter())) == [
            "black coffee on Friday",
            "coffee beans ordered twice",
            "the tea order moved",
        ]
        assert [h.record.id for h in store.keyword_search(USER, "coffee", MemoryFilter(), limit=5)] != []
        assert (
            store.vector_search(USER, EMBED.embed_query("coffee beans ordered"), MemoryFilter(), limit=1)[0].record.id
            == added.id
        )  # the repeated id kept the vector its first row gave
        assert len(store.history(USER, tea.id)) == 1
        store.delete(USER, [order.id])
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)


def test_a_repeated_id_in_one_call_is_refused(version_12: tuple[str, str, list]) -> None:
    app_url, owner_url, (tea, _) = version_12
    with PostgresStore.open(app_url, owner_url=owner_url) as store, store.transaction(USER) as cur:
        row = q.MemoryWrite((*q.record_params(tea, row_terms(USER, tea))[1:], None))
        with pytest.raises(psycopg.errors.RaiseException, match="appears twice"):
            cur.execute(q.SAVE, [USER, [row, row], []])


def saved_everything(store: PostgresStore, user: str) -> tuple[list[str], int, tuple[Any, ...]]:
    """(the user's memory contents, their history events, their BM25 statistics) as stored."""
    contents = sorted(r.content for r in store.list_memories(user, MemoryFilter()))
    with store.transaction(user) as cur:
        cur.execute("SELECT count(*) FROM history WHERE user_id = %s", [user])
        events = int(cur.fetchone()[0])
    return contents, events, stored_statistics(store, user)


@pytest.fixture
def version_13() -> Iterator[tuple[str, str, list]]:
    """A database at version 13 holding two memories written by migration 13's three-argument call."""
    records = [new_record(scope=Scope(USER), content=t) for t in ("green tea on Thursday", "the tea order moved")]
    with postgres_urls() as (app_url, owner_url):
        with psycopg.connect(owner_url, autocommit=True) as owner:
            assert migrations.migrate(owner, target=13) == 13
            for name, python_type in (
                ("memstrata_memory_write", q.MemoryWrite),
                ("memstrata_event_write", q.EventWrite),
            ):
                info = CompositeInfo.fetch(owner, name)
                assert info is not None
                register_composite(info, owner, python_type)
            rows = [q.MemoryWrite((*q.record_params(r, row_terms(USER, r))[1:], None)) for r in records]
            owner.execute(q.SAVE, [USER, rows, []])
        yield app_url, owner_url, records


def test_migration_14_upgrades_a_version_13_database_and_fences_saves_in_the_call(
    version_13: tuple[str, str, list],
) -> None:
    app_url, owner_url, (tea, order) = version_13
    with PostgresStore.open(app_url, owner_url=owner_url) as store, PostgresStore.open(app_url) as other:
        store.bind_embedder("hashing-64", 64)
        with psycopg.connect(owner_url) as owner:
            assert owner.execute("SELECT max(version) FROM schema_migrations").fetchone() == (migrations.LATEST,)
            assert owner.execute(
                "SELECT to_regprocedure(%s) IS NULL, to_regprocedure(%s) IS NOT NULL",
                [M013_SAVE_SIGNATURE, SAVE_SIGNATURE],
            ).fetchone() == (True, True)  # replaced, not overloaded (a three-argument call names one function)
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)
        assert store._fence_in_call  # one node: the call reads `erasures` where it runs
        coffee = new_record(scope=Scope(USER), content="black coffee on Friday")
        with fence(store, USER) as generation:
            assert generation == 0
            store.save(USER, [coffee], [new_event(coffee, EventType.ADD, after=coffee.content)])
        assert [r.content for r in store.get(USER, [coffee.id])] == [coffee.content]
        with store.transaction(USER) as cur:  # migration 13's three arguments: an unfenced save
            cur.execute(
                q.SAVE, [USER, [q.MemoryWrite((*q.record_params(order, row_terms(USER, order))[1:], None))], []]
            )
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)

        with fence(store, USER):
            other.erase_user(USER)  # another process erases the user after this unit read its generation
            before = saved_everything(store, USER)
            late = new_record(scope=Scope(USER), content="still drinks green tea")
            with pytest.raises(UserErased, match="was erased while this work was in flight; nothing of it was written"):
                store.save(USER, [late, replace(tea, content="tea rewritten")], [new_event(late, EventType.ADD)])
            assert saved_everything(store, USER) == before == ([], 0, ((0, 0), {}, set()))
        store.save(USER, [late])  # work begun after the erasure writes for a new user of the same id
        with fence(store, USER) as generation:
            assert generation == 1
            store.save(USER, [coffee])
        assert sorted(r.content for r in store.list_memories(USER, MemoryFilter())) == [coffee.content, late.content]
        assert stored_statistics(store, USER) == recounted_statistics(store, USER)


def test_the_call_refuses_a_stale_generation_with_its_own_sqlstate(version_13: tuple[str, str, list]) -> None:
    app_url, owner_url, (tea, _) = version_13
    with PostgresStore.open(app_url, owner_url=owner_url) as store:
        store.erase_user(USER)
        row = q.MemoryWrite((*q.record_params(tea, row_terms(USER, tea))[1:], None))
        with store._pool.connection() as conn:
            with pytest.raises(psycopg.Error, match="erased since the unit of work") as refused:
                conn.execute(q.SAVE_FENCED, [USER, [row], [], 0])
            assert refused.value.sqlstate == ERASED_SQLSTATE
            conn.execute(q.SAVE_FENCED, [USER, [row], [], 1])  # the current generation writes
        assert [r.id for r in store.get(USER, [tea.id])] == [tea.id]


def stored_rows(store: PostgresStore, user: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a save wrote for `user`, without the user id and the identity `seq`."""
    columns = [c for c in (*q.WRITE_COLUMNS, "embedding") if c != "user_id"]
    reads = {
        "memories": f"SELECT {', '.join(columns)}::text FROM memories WHERE user_id = %s ORDER BY seq",
        "history": f"SELECT {q.HISTORY_COLUMNS.replace('user_id, ', '')} FROM history WHERE user_id = %s ORDER BY seq",
        "postings": "SELECT term, memory_id, frequency, length FROM keyword_postings WHERE user_id = %s ORDER BY 1, 2",
        "documents": "SELECT term, documents FROM keyword_documents WHERE user_id = %s ORDER BY 1",
        "totals": "SELECT documents, tokens FROM keyword_totals WHERE user_id = %s",
    }
    found = {}
    with store.transaction(user) as cur:
        for table, read in reads.items():
            cur.execute(read, [user])
            found[table] = cur.fetchall()
    return found


def test_migration_15_upgrades_a_version_14_database_and_writes_every_row_as_version_14_did() -> None:
    """Migration 15's static statements (where Citus is not loaded) write what migration 14's quoted VALUES
    wrote: the same saves for two users, one before and one after the upgrade, leave the same rows."""
    written = [
        new_record(scope=Scope(USER, session_id="s1"), content=t, metadata={"n": i, "note": "l'été"})
        for i, t in enumerate(("green tea on Thursday, 8 May 2023", "the tea order moved", "3.14159 cups of tea"))
    ]
    rewritten = replace(written[1], content="the coffee order moved", importance=0.123456789)
    vectors = EMBED.embed_documents([r.content for r in [*written, rewritten]])
    added = [new_event(r, EventType.ADD, after=r.content) for r in [*written, rewritten]]

    def saves(user: str) -> list[tuple[list[q.MemoryWrite], list[q.EventWrite]]]:
        mine = [replace(r, scope=replace(r.scope, user_id=user)) for r in [*written, rewritten]]
        rows = [
            q.MemoryWrite((*q.record_params(r, row_terms(user, r))[1:], v)) for r, v in zip(mine, vectors, strict=True)
        ]
        events = [replace(e, user_id=user) for e in added]
        return [
            (rows[:3], [q.EventWrite(q.event_params(e)[1:]) for e in events[:3]]),
            ([rows[3]], [q.EventWrite(q.event_params(events[3])[1:])]),  # replaces a stored memory
        ]

    def call_saves(conn: psycopg.Connection[Any], user: str) -> None:
        for rows, events in saves(user):
            conn.execute(q.SAVE_FENCED, [user, rows, events, 0])

    with postgres_urls() as (app_url, owner_url):
        with psycopg.connect(owner_url, autocommit=True) as owner:
            assert migrations.migrate(owner, target=14) == 14
            migrations.bind_vector_column(owner, "hashing-64", 64, "test")
        with PostgresStore.open(app_url, owner_url=owner_url) as store, store._pool.connection() as conn:
            with psycopg.connect(owner_url, autocommit=True) as owner:
                assert owner.execute("SELECT max(version) FROM schema_migrations").fetchone() == (15,)
                assert (
                    "v_plain"
                    in owner.execute(
                        "SELECT prosrc FROM pg_proc WHERE oid = %s::regprocedure", [SAVE_SIGNATURE]
                    ).fetchone()[0]
                )
            call_saves(conn, "after")
            with conn.transaction():  # the call plans with plan_cache_mode = auto, and gives the caller's back
                conn.execute(q.SAVE_FENCED, [USER, *saves(USER)[0], 0])
                assert conn.execute("SELECT current_setting('plan_cache_mode')").fetchone() == ("force_custom_plan",)
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute(M014_SAVE.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))
        with PostgresStore.open(app_url, owner_url=owner_url) as store, store._pool.connection() as conn:
            call_saves(conn, "before")  # as migration 14's function writes
        with PostgresStore.open(app_url, owner_url=owner_url) as store:
            before, after = stored_rows(store, "before"), stored_rows(store, "after")
    assert [len(before[t]) for t in ("memories", "history", "totals")] == [3, 4, 1] and before["postings"]
    assert after == before
