"""What Citus adds to the PostgreSQL store's guarantees: every per-user statement is routed to one shard,
row-level security holds on the shards (through the coordinator and directly on a worker), keyword
search never returns another tenant's rows (the `ctid` join it once had did, issue 18 E6), erasure
leaves no row on any worker, and the store opens on a worker as well as on the coordinator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from memstrata.cli import main as cli_main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import UserErased
from memstrata.models import EventType, MemoryRecord, Scope, new_event, new_record, utcnow
from memstrata.storage.base import MemoryFilter
from memstrata.storage.fence import fence
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres import queries as q
from memstrata.storage.postgres.citus import citus_tables, distribute_new_tables
from memstrata.storage.postgres.migrations import USER_TABLES
from memstrata.storage.postgres.sql_functions import (
    CHECK_FENCE_SIGNATURE,
    COMMON_WORD_ROWS,
    M013_SAVE,
    M013_SAVE_SIGNATURE,
    SAVE_SIGNATURE,
)
from tests.citus.conftest import DIMENSIONS, EMBEDDER
from tests.support.citus import CitusSchema, citus_schema, connect_coordinator
from tests.support.pg import set_user

pytestmark = pytest.mark.citus

EMBED = HashingEmbedder(DIMENSIONS)
EVERYTHING = MemoryFilter(include_superseded=True, include_expired=True)


def remember(store: PostgresStore, user: str, texts: list[str]) -> list[MemoryRecord]:
    records = [new_record(scope=Scope(user), content=t) for t in texts]
    events = [new_event(r, EventType.ADD, after=r.content) for r in records]
    store.save(user, records, events, EMBED.embed_documents(texts))
    return records


def admin_in(citus: CitusSchema) -> psycopg.Connection[Any]:
    """A superuser connection to the coordinator, in the test's schema."""
    return connect_coordinator(options=f"-csearch_path={citus.schema},public")


def shard_of(conn: psycopg.Connection[Any], user: str) -> tuple[int, str, int]:
    """(shard id, shard table name (schema-qualified), worker port) holding `user`'s memories."""
    row = conn.execute(
        "SELECT s.shardid, s.shard_name, s.nodeport FROM citus_shards s "
        "WHERE s.table_name = 'memories'::regclass "
        "AND s.shardid = get_shard_id_for_distribution_column('memories', %s::text)",
        [user],
    ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1]), int(row[2])


def users_on_two_workers(conn: psycopg.Connection[Any], count: int = 2) -> tuple[str, ...]:
    """`count` user ids whose rows live on different shards, the first two on different workers."""
    chosen: list[str] = []
    seen_shards: set[int] = set()
    for n in range(1000):
        user = f"tenant-{n}"
        shard, _, port = shard_of(conn, user)
        if shard in seen_shards or (len(chosen) == 1 and port == shard_of(conn, chosen[0])[2]):
            continue
        chosen.append(user)
        seen_shards.add(shard)
        if len(chosen) == count:
            return tuple(chosen)
    raise AssertionError("no users on distinct shards")


@pytest.fixture
def routed_only(citus: CitusSchema) -> Iterator[PostgresStore]:
    """A store whose application role may run NO multi-shard statement: Citus raises an error for
    any statement that needs more than one task (`citus.multi_task_query_log_level = error`), inside
    the SECURITY DEFINER functions too (the setting belongs to the session)."""
    with connect_coordinator() as admin:
        admin.execute(
            sql.SQL("ALTER ROLE {} SET citus.multi_task_query_log_level = 'error'").format(
                sql.Identifier(citus.app_role)
            )
        )
    store = PostgresStore.open(citus.app_url, owner_url=citus.owner_url)
    store.bind_embedder(EMBEDDER, DIMENSIONS)
    try:
        yield store
    finally:
        store.close()


def test_every_per_user_store_call_is_routed_to_one_shard(routed_only: PostgresStore) -> None:
    store = routed_only
    small = remember(store, "alice", ["Alice drinks green tea", "Alice's manager is Sarah"])
    big = remember(store, "bob", [f"bob note {i} about green tea and coffee" for i in range(COMMON_WORD_ROWS + 20)])
    vector = EMBED.embed_query("green tea")
    for user, records in (("alice", small), ("bob", big)):
        assert store.get(user, [records[0].id])[0].id == records[0].id
        assert len(store.list_memories(user, MemoryFilter(), limit=5)) == min(5, len(records))
        assert store.count_memories(user, EVERYTHING) == len(records)
        hits = store.vector_search(user, vector, MemoryFilter(), limit=5)
        assert hits and all(h.record.user_id == user for h in hits)
        words = store.keyword_search(user, "green tea coffee", MemoryFilter(), limit=5)
        assert words and all(h.record.user_id == user for h in words)
        near, matched = store.hybrid_candidates(user, vector, "green tea", MemoryFilter(), limit=5)
        assert near and matched
        store.record_access(user, [h.record.id for h in hits], utcnow())
        assert store.history(user, records[0].id)
        store.put_item(user, "profile", "name", {"value": user})
        assert store.get_item(user, "profile", "name") is not None
        assert store.delete(user, [records[-1].id]) == 1
    assert store.get("bob", [h.record.id for h in hits])[0].access_count >= 1
    assert store.erase_user("alice")["memories"] == len(small) - 1


def test_explain_shows_one_task_for_each_statement_shape(pg_store: PostgresStore) -> None:
    remember(pg_store, "alice", ["Alice drinks green tea"])
    w, v = q.Where("alice", MemoryFilter()), EMBED.embed_query("tea")
    shapes = [
        (q.list_sql(w, newest_first=True), [*w.params, 10, 0, "alice"]),
        (q.vector_sql(w), [v, *w.params, v, 10, "alice"]),
        (q.RECORD_ACCESS, [utcnow(), "alice", ["x"]]),
        (q.FORGET_ACCESS, ["alice", ["x"]]),
        ("DELETE FROM memories WHERE user_id = %s AND id = ANY(%s)", ["alice", ["x"]]),
    ]
    for statement, params in shapes:
        with pg_store.transaction("alice") as cur:
            cur.execute("EXPLAIN " + statement, params)
            plan = "\n".join(row[0] for row in cur.fetchall())
        assert "Task Count: 1" in plan, plan


def test_keyword_search_never_returns_another_tenants_rows(citus: CitusSchema, pg_store: PostgresStore) -> None:
    """Issue 18 E6: with the rows fetched back by `ctid` alone, the final join of the big-tenant branch
    ran on every shard and, as the application role, returned other tenants' rows at the same ctids."""
    with admin_in(citus) as admin:
        victim, attacker = users_on_two_workers(admin)
    remember(pg_store, victim, [f"victim secret number {i} about the merger" for i in range(COMMON_WORD_ROWS + 40)])
    own = {r.id for r in remember(pg_store, attacker, [f"attacker note {i} on the merger" for i in range(300)])}
    hits = pg_store.keyword_search(attacker, "merger secret note", EVERYTHING, limit=50)
    assert len(hits) == 50
    assert {h.record.user_id for h in hits} == {attacker} and {h.record.id for h in hits} <= own
    with psycopg.connect(citus.app_url, autocommit=True) as app, app.transaction():
        set_user(app, attacker)
        rows = app.execute("SELECT user_id, id FROM memstrata_keyword_top(%s, %s, 200)", [attacker, ["merger"]])
        found = rows.fetchall()
    assert len(found) == 200 and {u for u, _ in found} == {attacker} and {i for _, i in found} <= own


def test_row_level_security_holds_on_the_shards(citus: CitusSchema, pg_store: PostgresStore) -> None:
    """As the application role, through the coordinator and directly on the worker holding the shard:
    no user set sees nothing, another user sees nothing, writes for another user are refused."""
    with admin_in(citus) as admin:
        alice, bob = users_on_two_workers(admin)
        _, shard_table, port = shard_of(admin, bob)
    remember(pg_store, bob, ["Bob's salary is 90000 dollars", "Bob's PIN is 4321"])
    host = citus.workers[0][0]
    for url in (citus.app_url, citus.url_on(host, port, role=citus.app_role)):
        with psycopg.connect(url, autocommit=True) as app:
            for table in ("memories", shard_table):  # the distributed table, then (on the worker) the shard
                if table == shard_table and url == citus.app_url:
                    continue  # shards are visible on the worker that holds them
                query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(*table.split(".")))
                assert _count_as(app, None, query) == 0
                assert _count_as(app, alice, query) == 0
                assert _count_as(app, bob, query) == 2
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"), app.transaction():
                set_user(app, alice)
                app.execute(
                    "INSERT INTO items (user_id, namespace, key, value, updated_at) VALUES (%s, 'p', 'k', '{}', now())",
                    [bob],
                )
            with app.transaction():
                set_user(app, alice)
                assert app.execute("DELETE FROM memories WHERE user_id = %s", [bob]).rowcount == 0
    assert len(pg_store.list_memories(bob, EVERYTHING)) == 2


def _count_as(conn: psycopg.Connection[Any], user: str | None, query: sql.Composable) -> int:
    with conn.transaction():
        if user is not None:
            set_user(conn, user)
        row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


def test_erasure_leaves_no_row_on_any_worker(citus: CitusSchema, pg_store: PostgresStore) -> None:
    with admin_in(citus) as admin:
        victim, keeper = users_on_two_workers(admin)
    records = remember(pg_store, victim, [f"victim fact {i}" for i in range(30)])
    remember(pg_store, keeper, ["keeper fact"])
    pg_store.put_item(victim, "profile", "name", {"value": "V"})
    pg_store.record_access(victim, [r.id for r in records[:5]], utcnow())
    before = _rows_on_workers(citus, victim)
    assert before | {"keyword_documents": 0, "keyword_postings": 0} == {
        "memories": 30,
        "history": 30,
        "items": 1,
        "memory_access": 5,
        "keyword_documents": 0,
        "keyword_totals": 1,
        "user_keys": 0,  # a plain store (no master key) keeps no data key
        "keyword_postings": 0,
    }
    assert before["keyword_documents"] > 30  # "victim", "fact", 30 numbers, the dates' words
    assert before["keyword_postings"] > 30 * 3  # each memory's terms, on the victim's worker
    counts = pg_store.erase_user(victim)
    assert counts == {"memories": 30, "history": 30, "items": 1}
    assert _rows_on_workers(citus, victim) == dict.fromkeys(USER_TABLES, 0)
    assert _rows_on_workers(citus, keeper)["memories"] == 1


def _rows_on_workers(citus: CitusSchema, user: str) -> dict[str, int]:
    """Rows of `user` per user table, counted in every shard on every worker (as a superuser)."""
    counts = dict.fromkeys(USER_TABLES, 0)
    with admin_in(citus) as admin:
        shards = admin.execute(
            "SELECT s.table_name::text, s.shard_name, s.nodename, s.nodeport FROM citus_shards s "
            "JOIN pg_class c ON c.oid = s.table_name WHERE c.relnamespace = %s::regnamespace "
            "AND c.relname = ANY(%s)",
            [citus.schema, list(USER_TABLES)],
        ).fetchall()
        dbname = admin.info.dbname
    for table, shard, host, port in shards:
        worker = psycopg.connect(
            host=host,
            port=port,
            dbname=dbname,
            user="root",
            autocommit=True,
            options=f"-csearch_path={citus.schema},public",
        )
        with worker:
            worker.execute("SET citus.override_table_visibility = off")
            query = sql.SQL("SELECT count(*) FROM {} WHERE user_id = %s").format(sql.Identifier(*shard.split(".")))
            row = worker.execute(query, [user]).fetchone()
        counts[table.rsplit(".", 1)[-1]] += int(row[0]) if row else 0
    return counts


def test_the_store_opens_and_reads_on_a_worker(citus: CitusSchema, pg_store: PostgresStore) -> None:
    """Issue 18 E9: `schema_migrations` is a reference table, so a worker knows the schema is current."""
    [record] = remember(pg_store, "alice", ["Alice drinks green tea"])
    host, port = citus.workers[1]
    owner_role = psycopg.conninfo.conninfo_to_dict(citus.owner_url)["user"]
    worker_store = PostgresStore.open(
        citus.url_on(host, port, role=citus.app_role), owner_url=citus.url_on(host, port, role=str(owner_role))
    )
    try:
        worker_store.bind_embedder(EMBEDDER, DIMENSIONS)
        assert [r.id for r in worker_store.get("alice", [record.id])] == [record.id]
        assert worker_store.keyword_search("alice", "green tea", MemoryFilter(), limit=3)[0].record.id == record.id
    finally:
        worker_store.close()


def test_db_distribute_command_and_later_tables(capsys: pytest.CaptureFixture[str]) -> None:
    """`memstrata db distribute` on an undistributed schema, idempotently; a user table a later migration
    adds is distributed by `distribute_new_tables`, colocated with memories."""
    with citus_schema(shard_count=4) as citus, psycopg.connect(citus.owner_url, autocommit=True) as owner:
        assert cli_main(["db", "distribute", "--owner", citus.owner_url, "--shards", "4", "--json"]) == 0
        assert '"distributed": []' in capsys.readouterr().out  # the fixture distributed it already
        owner.execute("CREATE TABLE later_user_table (user_id text NOT NULL, x int, PRIMARY KEY (user_id, x))")
        assert distribute_new_tables(owner, (*USER_TABLES, "later_user_table")) == ("later_user_table",)
        kinds = citus_tables(owner)
        assert kinds == {
            **dict.fromkeys(USER_TABLES, "distributed"),
            "later_user_table": "distributed",
            "erasures": "reference",
            "meta": "reference",
            "schema_migrations": "reference",
        }
        row = owner.execute(
            "SELECT count(DISTINCT p.colocationid) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND p.partmethod = 'h'"
        ).fetchone()
        assert row == (1,)  # every user table colocated


def delegated_functions(owner: psycopg.Connection[Any]) -> dict[str, bool | None]:
    """Function name -> None when Citus does not delegate its calls, else whether it forces the delegation
    (distributed by an argument, colocated with memories)."""
    rows = owner.execute(
        "SELECT p.proname, CASE WHEN o.distribution_argument_index IS NOT NULL AND o.colocationid = "
        "(SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'memories'::regclass) "
        "THEN coalesce(o.force_delegation, false) END "
        "FROM pg_dist_object o JOIN pg_proc p ON p.oid = o.objid "
        "WHERE o.classid = 'pg_proc'::regclass AND p.pronamespace = current_schema()::regnamespace"
    ).fetchall()
    return {str(name): forced for name, forced in rows}


def test_migration_13_on_a_distributed_schema_delegates_each_save_to_the_users_worker() -> None:
    """A schema distributed before migration 13 (its functions and types dropped, its version set back to
    12): opening the store runs migration 13, `distribute_new_tables` makes `memstrata_save` and
    `memstrata_lock_user` distributed functions colocated with memories (the lock with force_delegation), and a save
    is then one statement from the coordinator to the user's worker: the call, no BEGIN, no COMMIT, and
    none of the statements inside it."""
    with citus_schema(shard_count=4) as citus, psycopg.connect(citus.owner_url, autocommit=True) as owner:
        owner.execute(
            f"DROP FUNCTION {SAVE_SIGNATURE}; DROP FUNCTION {CHECK_FENCE_SIGNATURE}; "
            "DROP FUNCTION memstrata_lock_user(text); DROP TYPE memstrata_memory_write; DROP TYPE memstrata_event_write"
        )
        owner.execute("DELETE FROM schema_migrations WHERE version >= 13")
        assert set(delegated_functions(owner).values()) == {None}
        with connect_coordinator() as admin:
            for setting in ("citus.log_remote_commands = on", "client_min_messages = log"):
                admin.execute(sql.SQL("ALTER ROLE {} SET " + setting).format(sql.Identifier(citus.app_role)))
        try:
            with PostgresStore.open(citus.app_url, owner_url=citus.owner_url, pool_size=1) as store:
                assert {name: f for name, f in delegated_functions(owner).items() if f is not None} == {
                    "memstrata_save": False,  # delegated as a statement of its own
                    "memstrata_lock_user": True,  # delegated inside erasure's transaction too
                }
                store.bind_embedder(EMBEDDER, DIMENSIONS)
                sent: list[str] = []
                with store._pool.connection() as conn:
                    conn.add_notice_handler(lambda d: sent.append(d.message_primary or ""))
                [record] = remember(store, "ana", ["green tea on Thursday"])
                issued = [m for m in sent if m.startswith("issuing ")]
                assert len(issued) == 1 and "memstrata_save(" in issued[0], issued
                assert [r.id for r in store.list_memories("ana", EVERYTHING)] == [record.id]
        finally:
            with connect_coordinator() as admin:
                admin.execute(sql.SQL("ALTER ROLE {} RESET ALL").format(sql.Identifier(citus.app_role)))


def back_to_version_13(citus: CitusSchema, owner: psycopg.Connection[Any]) -> None:
    """Make the test's distributed schema what version 13 left: migration 13's save function (distributed
    as 13 distributed it), `erasures` hash-distributed by `user_key`, no migration 14 or 15 recorded."""
    owner.execute(f"DROP FUNCTION {SAVE_SIGNATURE}")
    owner.execute(f"DROP FUNCTION {CHECK_FENCE_SIGNATURE}")
    owner.execute(M013_SAVE)
    owner.execute(
        sql.SQL(f"ALTER FUNCTION {M013_SAVE_SIGNATURE} SET search_path = {{}}, public").format(
            sql.Identifier(citus.schema)
        )
    )
    owner.execute(
        "SELECT create_distributed_function(%s, 'p_user_id', colocate_with => 'memories', force_delegation => false)",
        [M013_SAVE_SIGNATURE],
    )
    owner.execute("SELECT undistribute_table('erasures')")
    owner.execute("SELECT create_distributed_table('erasures', 'user_key', colocate_with => 'none')")
    owner.execute("DELETE FROM schema_migrations WHERE version >= 14")
    assert citus_tables(owner)["erasures"] == "distributed"


def issued_by(store: PostgresStore, work: Callable[[], object]) -> list[str]:
    """The statements the coordinator sent to workers while `work` ran (the app role logs them: see below)."""
    sent: list[str] = []
    with store._pool.connection() as conn:
        conn.add_notice_handler(lambda d: sent.append(d.message_primary or ""))
    work()
    return [m for m in sent if m.startswith("issuing ")]


def test_migration_14_on_a_distributed_schema_delegates_fenced_saves_whole() -> None:
    """A schema distributed at version 13: opening the store runs migration 14 (the fence checked inside
    `memstrata_save`), `distribute_new_tables` makes `erasures` a reference table (a delegated call reads
    it on the user's worker; hash-distributed, a worker's call read no row for users whose `erasures`
    shard is on the other worker) and the new function delegated again. A fenced save is then one statement
    from the coordinator to the user's worker, and a fenced save after the user's erasure raises
    `UserErased` and writes nothing, for users on both workers."""
    with citus_schema(shard_count=4) as citus, psycopg.connect(citus.owner_url, autocommit=True) as owner:
        back_to_version_13(citus, owner)
        with connect_coordinator() as admin:
            for setting in ("citus.log_remote_commands = on", "client_min_messages = log"):
                admin.execute(sql.SQL("ALTER ROLE {} SET " + setting).format(sql.Identifier(citus.app_role)))
        try:
            with (
                PostgresStore.open(citus.app_url, owner_url=citus.owner_url, pool_size=1) as store,
                PostgresStore.open(citus.app_url, pool_size=1) as other,
            ):
                assert citus_tables(owner)["erasures"] == "reference"
                assert {name: f for name, f in delegated_functions(owner).items() if f is not None} == {
                    "memstrata_save": False,
                    "memstrata_lock_user": True,
                }
                assert store._fence_in_call
                store.bind_embedder(EMBEDDER, DIMENSIONS)
                with admin_in(citus) as admin:
                    users = users_on_two_workers(admin)
                for user in users:
                    with fence(store, user):
                        issued = issued_by(store, lambda u=user: remember(store, u, [f"{u} drinks green tea"]))
                    assert len(issued) == 1 and "memstrata_save(" in issued[0], issued
                    with fence(store, user):
                        other.erase_user(user)
                        with pytest.raises(UserErased, match="nothing of it was written"):
                            remember(store, user, [f"{user} still drinks green tea"])
                    assert store.list_memories(user, EVERYTHING) == []
                    with store.transaction(user) as cur:
                        cur.execute("SELECT count(*) FROM history WHERE user_id = %s", [user])
                        assert cur.fetchone() == (0,)
                    with fence(store, user) as generation:
                        assert generation == 1
                        remember(store, user, [f"{user} is a new user"])
                    assert [r.content for r in store.list_memories(user, EVERYTHING)] == [f"{user} is a new user"]
        finally:
            with connect_coordinator() as admin:
                admin.execute(sql.SQL("ALTER ROLE {} RESET ALL").format(sql.Identifier(citus.app_role)))


def test_a_store_on_hash_distributed_erasures_checks_the_fence_in_its_transaction() -> None:
    """A schema at version 14 whose `erasures` is still hash-distributed (not yet converted by `distribute`):
    the store checks the fence in its own transaction, as before migration 14, never in a delegated call
    (which could not see the user's row), and a fenced save after an erasure is still refused."""
    with citus_schema(shard_count=4) as citus, psycopg.connect(citus.owner_url, autocommit=True) as owner:
        owner.execute("SELECT undistribute_table('erasures')")
        owner.execute("SELECT create_distributed_table('erasures', 'user_key', colocate_with => 'none')")
        with (
            PostgresStore.open(citus.app_url, owner_url=citus.owner_url) as store,
            PostgresStore.open(citus.app_url) as other,
        ):
            assert not store._fence_in_call
            store.bind_embedder(EMBEDDER, DIMENSIONS)
            with admin_in(citus) as admin:
                users = users_on_two_workers(admin)
            for user in users:
                with fence(store, user):
                    remember(store, user, ["green tea on Thursday"])
                    other.erase_user(user)
                    with pytest.raises(UserErased):
                        remember(store, user, ["still green tea"])
                assert store.list_memories(user, EVERYTHING) == []
