"""Isolation enforced by the database: every check runs AS THE APPLICATION ROLE (not a superuser).

Two layers are tested separately: the store's methods (which also filter by user_id explicitly),
and raw SQL as the same role, which only row-level security stops.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg import sql

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import InvalidInput, StoreError
from memstrata.models import EventType, MemoryRecord, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from tests.support.pg import connect_admin, database_of, role_url, set_user

pytestmark = pytest.mark.postgres

EMBED = HashingEmbedder(64)
ALICE, BOB = "alice", "bob"
SQLISH = ["' OR '1'='1", "bob'; --", "x'); DELETE FROM memories; --", "%", "*", "bob\\", "$1"]


def remember(store: PostgresStore, user: str, text: str, **metadata: Any) -> MemoryRecord:
    record = new_record(scope=Scope(user), content=text, metadata=metadata)
    store.save(user, [record], [new_event(record, EventType.ADD, after=text)], EMBED.embed_documents([text]))
    return record


def in_transaction_as(conn: psycopg.Connection[Any], user: str | None, query: str, params: Any = ()) -> list[Any]:
    """Run `query` in one transaction of `conn` after setting app.user_id (unless None)."""
    with conn.transaction(), conn.cursor() as cur:
        if user is not None:
            set_user(cur, user)
        cur.execute(query, params)
        return cur.fetchall() if cur.description else [cur.rowcount]


@pytest.fixture
def bob_secret(pg_store: PostgresStore) -> MemoryRecord:
    pg_store.put_item(BOB, "profile", "employer", {"value": "Initech"})
    return remember(pg_store, BOB, "Bob's secret salary is 90000 dollars", user_id=ALICE, topic="pay")


def test_store_methods_never_cross_users(pg_store: PostgresStore, bob_secret: MemoryRecord) -> None:
    remember(pg_store, ALICE, "Alice likes salary negotiations")
    everything = MemoryFilter(include_superseded=True, include_expired=True)
    assert pg_store.get(ALICE, [bob_secret.id]) == []
    assert bob_secret.id not in [r.id for r in pg_store.list_memories(ALICE, everything)]
    assert pg_store.count_memories(ALICE, MemoryFilter(ids=(bob_secret.id,))) == 0
    assert pg_store.list_memories(ALICE, MemoryFilter(metadata={"user_id": ALICE, "topic": "pay"})) == []
    hits = pg_store.keyword_search(ALICE, "secret salary 90000 dollars", everything, limit=10)
    assert bob_secret.id not in [h.record.id for h in hits]
    hits = pg_store.vector_search(ALICE, EMBED.embed_query("Bob's secret salary"), everything, limit=10)
    assert bob_secret.id not in [h.record.id for h in hits]
    assert pg_store.history(ALICE, bob_secret.id) == []
    assert all(e.user_id == ALICE for e in pg_store.all_history(ALICE))
    assert pg_store.get_item(ALICE, "profile", "employer") is None
    assert pg_store.list_items(ALICE, "profile") == []


def test_store_methods_cannot_change_another_users_rows(pg_store: PostgresStore, bob_secret: MemoryRecord) -> None:
    pg_store.record_access(ALICE, [bob_secret.id], datetime(2030, 1, 1, tzinfo=UTC))
    assert pg_store.delete(ALICE, [bob_secret.id]) == 0
    assert pg_store.delete_item(ALICE, "profile", "employer") is False
    pg_store.put_item(ALICE, "profile", "employer", {"value": "ACME"})  # same key, other user: a new row
    with pytest.raises(InvalidInput):
        pg_store.save(ALICE, [bob_secret])
    with pytest.raises(InvalidInput):
        pg_store.delete(ALICE, [bob_secret.id], [new_event(bob_secret, EventType.DELETE)])
    counts = pg_store.erase_user(ALICE)
    assert counts == {"memories": 0, "history": 0, "items": 1}
    [still] = pg_store.get(BOB, [bob_secret.id])
    assert still == bob_secret  # content, access count, metadata untouched
    [event] = pg_store.history(BOB, bob_secret.id)
    assert event.after == bob_secret.content  # history not scrubbed by Alice's delete
    item = pg_store.get_item(BOB, "profile", "employer")
    assert item is not None and item.value == {"value": "Initech"}


@pytest.mark.parametrize("crafted", SQLISH)
def test_sql_looking_input_is_only_data(pg_store: PostgresStore, bob_secret: MemoryRecord, crafted: str) -> None:
    assert pg_store.get(crafted, [bob_secret.id]) == []
    assert pg_store.list_memories(crafted, MemoryFilter()) == []
    assert pg_store.keyword_search(ALICE, crafted + " salary", MemoryFilter(), limit=5) == []
    assert pg_store.keyword_search(crafted, "salary", MemoryFilter(), limit=5) == []
    assert pg_store.list_memories(ALICE, MemoryFilter(metadata={crafted: crafted})) == []
    assert pg_store.list_memories(ALICE, MemoryFilter(session_id=crafted, agent_id=crafted)) == []
    assert pg_store.delete(crafted, [bob_secret.id, crafted]) == 0
    assert pg_store.count_memories(BOB, MemoryFilter()) == 1


def test_raw_sql_as_app_role_sees_only_the_current_user(
    pg_store: PostgresStore, bob_secret: MemoryRecord, app_conn: psycopg.Connection[Any]
) -> None:
    remember(pg_store, ALICE, "alice row")
    pg_store.put_item(ALICE, "profile", "city", {"value": "Lyon"})
    for table in ("memories", "history", "items"):
        rows = in_transaction_as(app_conn, ALICE, f"SELECT DISTINCT user_id FROM {table}")
        assert rows == [(ALICE,)], table
        # crafted WHERE clauses cannot widen what the policy allows
        query = f"SELECT count(*) FROM {table} WHERE user_id = 'bob' OR user_id <> 'alice' OR true IS NULL"
        assert in_transaction_as(app_conn, ALICE, query) == [(0,)], table


def test_no_user_set_means_zero_rows(
    pg_store: PostgresStore, bob_secret: MemoryRecord, app_conn: psycopg.Connection[Any]
) -> None:
    for table in ("memories", "history", "items"):
        assert in_transaction_as(app_conn, None, f"SELECT count(*) FROM {table}") == [(0,)]
    # a transaction-local user does not outlive its transaction on a (pooled) session
    assert in_transaction_as(app_conn, BOB, "SELECT count(*) FROM memories") == [(1,)]
    assert in_transaction_as(app_conn, None, "SELECT count(*) FROM memories") == [(0,)]
    assert in_transaction_as(app_conn, "", "SELECT count(*) FROM memories") == [(0,)]


def test_raw_writes_to_another_user_are_refused_or_affect_nothing(
    pg_store: PostgresStore, bob_secret: MemoryRecord, app_conn: psycopg.Connection[Any]
) -> None:
    assert in_transaction_as(app_conn, ALICE, "UPDATE memories SET content = 'pwned' WHERE user_id = 'bob'") == [0]
    assert in_transaction_as(app_conn, ALICE, "DELETE FROM memories") == [0]
    assert in_transaction_as(app_conn, ALICE, "DELETE FROM history WHERE user_id = 'bob'") == [0]
    assert in_transaction_as(app_conn, ALICE, "UPDATE items SET value = '{}' WHERE true") == [0]
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        in_transaction_as(
            app_conn,
            ALICE,
            "INSERT INTO items (user_id, namespace, key, value, updated_at) VALUES ('bob', 'p', 'k', '{}', now())",
        )
    remember(pg_store, ALICE, "alice row")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        in_transaction_as(app_conn, ALICE, "UPDATE memories SET user_id = 'bob'")  # move own rows into B
    [still] = pg_store.get(BOB, [bob_secret.id])
    assert still.content == bob_secret.content


def test_app_role_cannot_switch_row_security_off(pg_store: PostgresStore, app_conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app_conn.execute("ALTER TABLE memories DISABLE ROW LEVEL SECURITY")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app_conn.execute("DROP POLICY memories_user_isolation ON memories")
    app_conn.execute("SET row_security = off")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        app_conn.execute("SELECT count(*) FROM memories")


def test_sql_functions_respect_the_current_user(
    pg_store: PostgresStore, bob_secret: MemoryRecord, app_conn: psycopg.Connection[Any]
) -> None:
    vector = EMBED.embed_query("secret salary")
    register_vector(app_conn)
    q = "SELECT count(*) FROM {}"
    keyword = "memstrata_keyword_matches(%s, ARRAY['salari'])"
    for user in (ALICE, None):
        assert in_transaction_as(app_conn, user, q.format(keyword), [BOB]) == [(0,)]
        assert in_transaction_as(app_conn, user, q.format("match_memories(%s, -1, 10, %s)"), [vector, BOB]) == [(0,)]
        assert in_transaction_as(
            app_conn, user, q.format("hybrid_memory_search(ARRAY['salari'], %s, %s, 10)"), [vector, BOB]
        ) == [(0,)]
    top = "memstrata_keyword_top(%s, ARRAY['salari'], 10)"
    for user in (ALICE, None):
        assert in_transaction_as(app_conn, user, q.format(top), [BOB]) == [(0,)]
    assert in_transaction_as(app_conn, BOB, q.format(keyword), [BOB]) == [(1,)]
    assert in_transaction_as(app_conn, BOB, q.format(top), [BOB]) == [(1,)]
    assert in_transaction_as(app_conn, BOB, q.format("match_memories(%s, -1, 10)"), [vector]) == [(1,)]


def test_user_listing_reveals_ids_only(pg_store: PostgresStore, bob_secret: MemoryRecord) -> None:
    remember(pg_store, ALICE, "alice row")
    assert pg_store.user_ids() == [ALICE, BOB]
    assert pg_store.user_ids(limit=1) == [ALICE]


def test_a_role_without_grants_gets_nothing(pg_store: PostgresStore, bob_secret: MemoryRecord, app_url: str) -> None:
    """Definer functions are not executable by PUBLIC; tables are not readable by other roles."""
    stranger = "memstrata_stranger_" + database_of(app_url).rsplit("_", 1)[-1]
    with connect_admin() as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'x'").format(sql.Identifier(stranger)))
        try:
            with psycopg.connect(role_url(stranger, "x", database_of(app_url)), autocommit=True) as conn:
                for query in (
                    "SELECT count(*) FROM memories",
                    "SELECT memstrata_user_ids(10)",
                    "SELECT * FROM memstrata_keyword_matches('bob', ARRAY['salari'])",
                    "SELECT * FROM memstrata_keyword_top('bob', ARRAY['salary'], 10)",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        conn.execute(query)
            with pytest.raises(StoreError):  # and the store does not grant itself anything as that role
                PostgresStore.open(role_url(stranger, "x", database_of(app_url)))
        finally:
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(stranger)))


def test_rls_is_reported_as_enforced_for_the_app_role(pg_store: PostgresStore) -> None:
    assert pg_store.row_security_enforced is True


def test_a_save_waits_for_the_erasure_lock_where_it_writes(pg_store: PostgresStore) -> None:
    """A save sent as its own transaction takes the user's write lock inside `memstrata_save`, where the
    user's rows are (on Citus the user's worker); erasure takes it there exclusively (`memstrata_lock_user`),
    so the save waits until the erasure's transaction ends."""
    done = threading.Event()
    with pg_store.transaction(ALICE) as cur:
        cur.execute("SELECT memstrata_lock_user(%s)", [ALICE])  # what erase_user holds until it commits
        writer = threading.Thread(target=lambda: (remember(pg_store, ALICE, "written after the lock"), done.set()))
        writer.start()
        assert not done.wait(0.5)  # blocked behind the exclusive lock
        cur.execute("SELECT count(*) FROM memories WHERE user_id = %s", [ALICE])
        assert cur.fetchone() == (0,)
    writer.join(10)
    assert done.is_set()
    assert [r.content for r in pg_store.list_memories(ALICE, MemoryFilter())] == ["written after the lock"]


def test_the_save_function_refuses_another_users_transaction(
    pg_store: PostgresStore, app_conn: psycopg.Connection[Any]
) -> None:
    """Called inside a transaction whose app.user_id names another user, `memstrata_save` writes nothing."""
    with pytest.raises(psycopg.errors.RaiseException, match="another user"):
        in_transaction_as(app_conn, BOB, "SELECT memstrata_save(%s, '{}', '{}')", [ALICE])
