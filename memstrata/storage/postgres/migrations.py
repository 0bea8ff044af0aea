"""Versioned schema migrations for the PostgreSQL store, run by the owner role.

Each migration is a numbered function applied once, in order, inside one transaction guarded by
an advisory lock (several processes may open the store at the same time). Applied versions are
recorded in `schema_migrations`. The embedding column gets its dimension and HNSW index later,
in `bind_embedder`, once the embedder is known (`bind_vector_column` below).

Every user-data table has `user_id` first in its primary key, a `CHECK (user_id <> '')`, no
foreign key, and row-level security ENABLEd and FORCEd (see docs/postgres.md). A migration that adds a
user table lists it in `USER_TABLES`: on a schema distributed on Citus (`citus.py`) `migrate` then
distributes it by `user_id`, colocated with `memories`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ...core.keyword_statistics import statistics_change
from ...errors import EmbeddingMismatch, StoreError
from ...models import MemoryKind, MemoryRecord, Scope
from .citus import distribute_new_tables
from .keyword import postings_statements, row_terms, row_values, statistics_statements
from .sql_functions import (
    CHECK_FENCE,
    CHECK_FENCE_SIGNATURE,
    DEFINER_FUNCTIONS,
    EVENT_WRITE_TYPE,
    FUNCTIONS,
    HYBRID_MEMORY_SEARCH,
    KEYWORD_TOP,
    KEYWORD_TOP_SIGNATURE,
    LOCK_USER,
    LOCK_USER_SIGNATURE,
    M003_DEFINER_FUNCTIONS,
    M009_DROPPED,
    M009_FUNCTIONS,
    M011_FUNCTIONS,
    M012_FUNCTIONS,
    M012_REPLACED,
    M013_SAVE,
    M013_SAVE_SIGNATURE,
    M014_SAVE,
    MEMORY_WRITE_TYPE,
    SAVE,
    SAVE_SIGNATURE,
    USER_IDS,
)

USER_TABLES = (
    "memories",
    "history",
    "items",
    "memory_access",
    "keyword_documents",
    "keyword_totals",
    "user_keys",
    "keyword_postings",
)
"""Tables holding user data: RLS enabled and forced on each."""

FENCE_TABLE = "erasures"
"""Per-user erasure generations (storage/fence.py), keyed by the SHA-256 of the user id."""

_FENCE_KEY = "encode(sha256(convert_to(current_setting('app.user_id', true), 'UTF8')), 'hex')"
"""The current transaction's user, as `fence_key` names it."""

_M002_TABLES = ("memories", "history", "items")
"""The user tables that existed when migration 2 ran (it must not change)."""

HNSW_MAX_DIMENSIONS = 2000
"""pgvector's HNSW limit for `vector`; larger embeddings are searched exactly (no index)."""

_LOCK_KEY = "memstrata.schema"
_VECTOR_SCHEMA = (
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
)
Cursor = psycopg.Cursor[Any]


@dataclass(frozen=True, slots=True)
class Context:
    """Names a migration needs: where it creates things and which role owns them."""

    schema: str
    vector_schema: str
    owner: str


def m001_tables(cur: Cursor, ctx: Context) -> None:
    cur.execute(
        """
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);

        CREATE TABLE memories (
            user_id text NOT NULL CHECK (user_id <> ''),
            id text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            agent_id text,
            session_id text,
            kind text NOT NULL,
            content text NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{}',
            importance double precision NOT NULL DEFAULT 0.5,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            valid_from timestamptz,
            valid_to timestamptz,
            superseded_by text,
            expires_at timestamptz,
            source_ids text[] NOT NULL DEFAULT '{}',
            access_count integer NOT NULL DEFAULT 0,
            last_accessed_at timestamptz,
            content_hash text NOT NULL,
            pinned boolean NOT NULL DEFAULT false,
            context text NOT NULL DEFAULT '',
            date_text text NOT NULL DEFAULT '',
            embedding vector,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english'::regconfig, content), 'A')
                || setweight(to_tsvector('english'::regconfig, context), 'B')
                || setweight(to_tsvector('english'::regconfig, date_text), 'C')
            ) STORED,
            PRIMARY KEY (user_id, id)
        );
        CREATE INDEX memories_user_created ON memories (user_id, created_at, seq);
        CREATE INDEX memories_user_hash ON memories (user_id, content_hash);
        CREATE INDEX memories_tsv ON memories USING gin (tsv);

        CREATE TABLE history (
            user_id text NOT NULL CHECK (user_id <> ''),
            id text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            memory_id text NOT NULL,
            event text NOT NULL,
            at timestamptz NOT NULL,
            before text,
            after text,
            details jsonb NOT NULL DEFAULT '{}',
            PRIMARY KEY (user_id, id)
        );
        CREATE INDEX history_memory ON history (user_id, memory_id, at, seq);

        CREATE TABLE items (
            user_id text NOT NULL CHECK (user_id <> ''),
            namespace text NOT NULL,
            key text NOT NULL,
            value jsonb NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (user_id, namespace, key)
        );
        CREATE INDEX items_recent ON items (user_id, namespace, updated_at DESC);
        """
    )


def m002_row_level_security(cur: Cursor, ctx: Context) -> None:
    """Isolation policy on every user table; a SELECT-everything policy for the owner role only.

    The owner policy is what lets the SECURITY DEFINER helpers (run as the owner) use the GIN
    index and list users. It is `TO` the owner role: the application role never matches it.
    """
    for table in _M002_TABLES:
        _isolate(cur, table)
    for table in ("memories", "items"):
        cur.execute(
            sql.SQL("CREATE POLICY {} ON {} FOR SELECT TO {} USING (true)").format(
                sql.Identifier(f"{table}_owner_read"), sql.Identifier(table), sql.Identifier(ctx.owner)
            )
        )


def _isolate(cur: Cursor, table: str) -> None:
    """ENABLE + FORCE row-level security on `table`, with the per-user isolation policy."""
    name = sql.Identifier(table)
    cur.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name))
    cur.execute(sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(name))
    cur.execute(
        sql.SQL(
            "CREATE POLICY {} ON {} "
            "USING (user_id = current_setting('app.user_id', true)) "
            "WITH CHECK (user_id = current_setting('app.user_id', true))"
        ).format(sql.Identifier(f"{table}_user_isolation"), name)
    )


def m003_functions(cur: Cursor, ctx: Context) -> None:
    # Load pgvector's library so `SET hnsw.*` on the functions is checked against its real (user-settable)
    # parameters; unknown placeholders would need a superuser.
    cur.execute("SELECT '[1]'::vector")
    for signature, statement in FUNCTIONS:
        _create_function(cur, ctx, signature, statement)
    for signature in M003_DEFINER_FUNCTIONS:
        cur.execute(sql.SQL("REVOKE EXECUTE ON FUNCTION " + signature + " FROM PUBLIC"))


def _create_function(cur: Cursor, ctx: Context, signature: str, statement: str) -> None:
    """Run `statement` (a CREATE FUNCTION) and pin the function's search_path."""
    search_path = sql.SQL(", ").join(
        [sql.Identifier(ctx.schema), sql.Identifier(ctx.vector_schema), sql.SQL("pg_temp")]
    )
    cur.execute(statement)
    cur.execute(sql.SQL("ALTER FUNCTION " + signature + " SET search_path = {}").format(search_path))


def m004_room_for_hot_updates(cur: Cursor, ctx: Context) -> None:
    """Every search records the access of its hits (count + time, for time-weighted ranking). Those
    columns are in no index, so with free room on the page PostgreSQL updates the row in place (HOT)
    instead of adding entries to every index, HNSW included: measured 6.4 → 1.5 ms per search.
    The (user_id, kind) index answers "does this user have memories of this kind" for context()."""
    cur.execute(sql.SQL("ALTER TABLE {}.memories SET (fillfactor = 80)").format(sql.Identifier(ctx.schema)))
    cur.execute(
        sql.SQL("CREATE INDEX memories_user_kind ON {}.memories (user_id, kind, created_at)").format(
            sql.Identifier(ctx.schema)
        )
    )


def m005_keyword_search_speed(cur: Cursor, ctx: Context) -> None:
    """Keyword search at 100k rows in one tenant (docs/postgres.md, "Keyword search"):

    * The GIN index on tsv loses its pending list (`fastupdate = off`): with it on, up to 4 MB of
      unsorted recent entries are scanned linearly by EVERY search until a VACUUM or an autoanalyze
      merges them (a manual ANALYZE does not): measured 7 ms of a 100k-row search. Inserts now update
      the index directly. The current pending list is merged here.
    * `memstrata_keyword_top`, the store's keyword search: small tenants through their btree, big ones
      through GIN with narrow ranking and the common-word rule (sql_functions.KEYWORD_TOP).
    """
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    cur.execute(sql.SQL("ALTER INDEX {}.memories_tsv SET (fastupdate = off)").format(sql.Identifier(ctx.schema)))
    cur.execute("SELECT gin_clean_pending_list(%s::regclass)", [f"{ctx.schema}.memories_tsv"])
    _create_function(cur, ctx, KEYWORD_TOP_SIGNATURE, KEYWORD_TOP)
    cur.execute(sql.SQL("REVOKE EXECUTE ON FUNCTION " + KEYWORD_TOP_SIGNATURE + " FROM PUBLIC"))


def m006_access_table(cur: Cursor, ctx: Context) -> None:
    """Access statistics move to a narrow table. Every search records the access of its hits; updating
    them in `memories` rewrote a ~1.6 kB row that rarely had room on its page, so the update was not HOT
    and added entries to every index (HNSW and GIN included): ~5 ms per search and index bloat. A row
    of `memory_access` is ~60 bytes with one primary key. `memories.access_count` / `last_accessed_at`
    stay as the values written with the record; reads take `memory_access`'s when it has a row."""
    cur.execute(
        """
        CREATE TABLE memory_access (
            user_id text NOT NULL CHECK (user_id <> ''),
            memory_id text NOT NULL,
            access_count integer NOT NULL,
            last_accessed_at timestamptz,
            PRIMARY KEY (user_id, memory_id)
        )
        """
    )
    _isolate(cur, "memory_access")


def m007_routable_functions(cur: Cursor, ctx: Context) -> None:
    """The functions rewritten so that they also run on Citus (docs/postgres.md, "Scale-out"):

    * `memstrata_keyword_top` fetches its best rows by primary key, never by `ctid` (on Citus a ctid
      join is not routed to the user's shard, and ctids repeat across shards), and returns the access
      statistics itself, so the store's keyword statement joins no table around the function.
    * `memstrata_user_ids` in PL/pgSQL: Citus cannot plan the recursive SQL function.
    * `hybrid_memory_search` reads the keyword matches in a statement of their own.
    """
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    for signature, statement in (
        (KEYWORD_TOP_SIGNATURE, KEYWORD_TOP),
        ("memstrata_user_ids(integer)", USER_IDS),
        ("hybrid_memory_search(text, vector, text, integer)", HYBRID_MEMORY_SEARCH),
    ):
        _create_function(cur, ctx, signature, statement.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))


def m008_erasure_fence(cur: Cursor, ctx: Context) -> None:
    """Erasure as a write fence (storage/fence.py): each erasure raises the user's generation, and
    every fenced write compares it in its own transaction. Rows are named by the hash of the user id,
    so no erased id stays in clear; the policy lets a transaction see only its own user's row."""
    cur.execute(f"CREATE TABLE {FENCE_TABLE} (user_key text PRIMARY KEY, generation bigint NOT NULL)")
    cur.execute(f"ALTER TABLE {FENCE_TABLE} ENABLE ROW LEVEL SECURITY")
    cur.execute(f"ALTER TABLE {FENCE_TABLE} FORCE ROW LEVEL SECURITY")
    cur.execute(
        f"CREATE POLICY {FENCE_TABLE}_user_isolation ON {FENCE_TABLE} "
        f"USING (user_key = {_FENCE_KEY}) WITH CHECK (user_key = {_FENCE_KEY})"
    )


BACKFILL_BATCH = 1000
"""Rows read, indexed and written back at a time when migration 9 indexes existing memories."""


def m009_keyword_terms(cur: Cursor, ctx: Context) -> None:
    """BM25 ranked like the SQLite store (docs/search.md, "PostgreSQL and SQLite rank alike"):

    * Each memory carries the terms it is indexed under, computed in Python (`keyword.row_terms`):
      `keyword_terms` (GIN, no pending list), `keyword_frequencies`, `keyword_length`. The generated
      `tsv` column, which read the text in SQL, and its functions are dropped.
    * Per-user statistics for BM25: `keyword_totals` (memories, tokens) and `keyword_documents` (the
      memories holding each term), kept by every write.
    * Existing memories are indexed here, in batches of `BACKFILL_BATCH`, and their statistics counted.
    """
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    for signature in M009_DROPPED:
        cur.execute(sql.SQL("DROP FUNCTION " + signature))
    cur.execute(
        """
        ALTER TABLE memories DROP COLUMN tsv,
            ADD COLUMN keyword_terms text[] NOT NULL DEFAULT '{}',
            ADD COLUMN keyword_frequencies real[] NOT NULL DEFAULT '{}',
            ADD COLUMN keyword_length integer NOT NULL DEFAULT 0;
        CREATE INDEX memories_keyword_terms ON memories USING gin (keyword_terms) WITH (fastupdate = off);
        CREATE TABLE keyword_documents (
            user_id text NOT NULL CHECK (user_id <> ''),
            term text NOT NULL,
            documents integer NOT NULL,
            PRIMARY KEY (user_id, term)
        );
        CREATE TABLE keyword_totals (
            user_id text NOT NULL CHECK (user_id <> '') PRIMARY KEY,
            documents bigint NOT NULL,
            tokens bigint NOT NULL
        );
        """
    )
    for table in ("keyword_documents", "keyword_totals"):
        _isolate(cur, table)
    for signature, statement in M009_FUNCTIONS:
        _create_function(cur, ctx, signature, statement)
    for signature in (M009_FUNCTIONS[2][0], M009_FUNCTIONS[3][0]):
        cur.execute(sql.SQL("REVOKE EXECUTE ON FUNCTION " + signature + " FROM PUBLIC"))
    index_existing_memories(cur, postings=False)


def index_existing_memories(cur: Cursor, *, postings: bool = True) -> None:
    """Compute the terms of stored memories in Python and count each user's statistics, for rows that
    have none (written before migration 9, or by SQL outside the store), with their postings unless
    `postings` is False (migration 9 runs before the postings table exists). Run as the owner: it reads
    every row (its read policy); each user's rows are written as that user (RLS)."""
    last = ("", "")
    while True:
        cur.execute(
            "SELECT user_id, id, kind, content, context, created_at FROM memories "
            "WHERE (user_id, id) > (%s, %s) AND keyword_length = 0 ORDER BY user_id, id LIMIT %s",
            [*last, BACKFILL_BATCH],
        )
        rows = cur.fetchall()
        if not rows:
            return
        by_user: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_user.setdefault(row[0], []).append(row)
        for user_id, user_rows in by_user.items():
            _index_rows(cur, user_id, user_rows, postings=postings)
        last = (rows[-1][0], rows[-1][1])


def _index_rows(cur: Cursor, user_id: str, rows: list[tuple[Any, ...]], *, postings: bool) -> None:
    cur.execute("SELECT set_config('app.user_id', %s, true)", [user_id])
    indexed = []
    for _, id_, kind, content, context, created_at in rows:
        record = MemoryRecord(
            id=id_,
            scope=Scope(user_id),
            kind=MemoryKind(kind),
            content=content,
            context=context,
            created_at=created_at,
            updated_at=created_at,
        )
        indexed.append((id_, row_terms(user_id, record)))
    cur.executemany(
        "UPDATE memories SET keyword_terms = %s, keyword_frequencies = %s, keyword_length = %s "
        "WHERE user_id = %s AND id = %s",
        [[*row_values(terms), user_id, id_] for id_, terms in indexed],
    )
    change = statistics_change((), ((list(t.frequencies), t.length) for _, t in indexed))
    statements = statistics_statements(user_id, change)
    if postings:
        statements += postings_statements(user_id, (), indexed)
    for statement, params in statements:
        cur.execute(statement, params)


def m010_user_keys(cur: Cursor, ctx: Context) -> None:
    """Crypto-shredding (storage/crypto.py, docs/privacy.md): `user_keys` holds one wrapped data key per
    user (the user's first write creates it, erasure deletes it). The owner may read and rewrap every
    row (`memstrata store rotate-master-key`)."""
    cur.execute(
        """
        CREATE TABLE user_keys (
            user_id text PRIMARY KEY CHECK (user_id <> ''),
            wrapped bytea NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    _isolate(cur, "user_keys")
    cur.execute(
        sql.SQL(
            "CREATE POLICY user_keys_owner_rewrap ON user_keys FOR ALL TO {} USING (true) WITH CHECK (true)"
        ).format(sql.Identifier(ctx.owner))
    )


def m011_keyword_postings(cur: Cursor, ctx: Context) -> None:
    """Keyword search ranks from a narrow table of postings (docs/search.md, "PostgreSQL and SQLite rank
    alike"): `keyword_postings` holds one row per (user, term, memory) with the term's weighted frequency
    and the memory's length, copied from the memory's `keyword_terms` / `keyword_frequencies` /
    `keyword_length` (which stay: a write reads them to know what it replaces). Its primary key
    (user_id, term, memory_id) includes both values, so a term's postings are one index range of one
    user. Ranking no longer reads ~2 kB memory rows through the GIN index, whose posting lists mixed
    every user's rows; the GIN index is dropped (writes no longer maintain it). The keyword functions
    are replaced (sql_functions.M011_FUNCTIONS); existing memories' postings are copied in batches of
    `BACKFILL_BATCH` memories, each user's as that user (RLS)."""
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    cur.execute(
        """
        CREATE TABLE keyword_postings (
            user_id text NOT NULL CHECK (user_id <> ''),
            term text NOT NULL,
            memory_id text NOT NULL,
            frequency real NOT NULL,
            length integer NOT NULL,
            PRIMARY KEY (user_id, term, memory_id) INCLUDE (frequency, length)
        );
        DROP INDEX memories_keyword_terms;
        """
    )
    _isolate(cur, "keyword_postings")
    for signature, statement in M011_FUNCTIONS:
        _create_function(cur, ctx, signature, statement)
        cur.execute(sql.SQL("REVOKE EXECUTE ON FUNCTION " + signature + " FROM PUBLIC"))
    copy_postings(cur)


def copy_postings(cur: Cursor) -> None:
    """Write the postings of every stored memory from its keyword columns, `BACKFILL_BATCH` memories at a
    time (migration 11). Run as the owner: it reads every memory (its read policy) and writes each
    user's postings as that user (RLS)."""
    last = ("", "")
    while True:
        cur.execute(
            "SELECT user_id, id FROM memories WHERE (user_id, id) > (%s, %s) ORDER BY user_id, id LIMIT %s",
            [*last, BACKFILL_BATCH],
        )
        rows = cur.fetchall()
        if not rows:
            return
        by_user: dict[str, list[str]] = {}
        for user_id, id_ in rows:
            by_user.setdefault(user_id, []).append(id_)
        for user_id, ids in by_user.items():
            cur.execute("SELECT set_config('app.user_id', %s, true)", [user_id])
            cur.execute(
                "INSERT INTO keyword_postings (user_id, term, memory_id, frequency, length) "
                "SELECT m.user_id, t.term, m.id, t.frequency, m.keyword_length FROM memories m "
                "CROSS JOIN LATERAL unnest(m.keyword_terms, m.keyword_frequencies) AS t(term, frequency) "
                "WHERE m.user_id = %s AND m.id = ANY(%s)",
                [user_id, ids],
            )
        last = (rows[-1][0], rows[-1][1])


def m012_rpc_functions_as_of(cur: Cursor, ctx: Context) -> None:
    """`match_memories` and `hybrid_memory_search` judge "current" at an `as_of` time the caller passes
    (the store's clock; the server's `now()` by default), by the rule both backends share
    (`storage.base.current_at_sql`). A new parameter is a new signature: the old functions are dropped."""
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    for old, _ in M012_REPLACED:
        cur.execute(sql.SQL("DROP FUNCTION " + old))
    for signature, statement in M012_FUNCTIONS:
        _create_function(cur, ctx, signature, statement)


def m013_one_call_saves(cur: Cursor, ctx: Context) -> None:
    """`memstrata_save`: everything a save writes (memories, events, access rows dropped, BM25 statistics,
    postings) in one function call, so that on Citus the coordinator delegates the whole save to the
    worker holding the user's shards (one hop instead of one per statement; `citus.distribute` makes it
    and `memstrata_lock_user`, erasure's lock where the save runs, distributed functions). The two row
    types carry the memories and events of the call."""
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    cur.execute(MEMORY_WRITE_TYPE)
    cur.execute(EVENT_WRITE_TYPE)
    _create_function(cur, ctx, M013_SAVE_SIGNATURE, M013_SAVE)
    _create_function(cur, ctx, LOCK_USER_SIGNATURE, LOCK_USER)


def m014_fence_in_the_save_call(cur: Cursor, ctx: Context) -> None:
    """`memstrata_save` checks the write fence itself (storage/fence.py): a fourth argument, the erasure
    generation the unit of work fenced the user at (NULL, the default, for an unfenced save, so three-argument
    calls keep working), compared with the user's `erasures` row under the lock the call already takes. A
    fenced save is then one call as well, delegated whole to the user's worker on Citus, where `erasures`
    becomes a reference table (`citus.distribute`) so that the worker reads it locally. A new argument is a
    new signature: the function of migration 13 is dropped (and, on Citus, the new one distributed again)."""
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    cur.execute(sql.SQL("DROP FUNCTION " + M013_SAVE_SIGNATURE))
    _create_function(cur, ctx, SAVE_SIGNATURE, M014_SAVE)


def m015_static_save_statements(cur: Cursor, ctx: Context) -> None:
    """`memstrata_save` (same signature, replaced: on Citus it stays distributed, and the new text reaches the
    workers) writes with static statements where Citus is not loaded: `INSERT ... SELECT` from its array
    arguments, their plans kept for the session (`plan_cache_mode = auto` while the call runs), instead of
    a statement text with every value quoted in, built, parsed and planned on every call. Where Citus is
    loaded it writes as migration 14's did (multi-row VALUES, which Citus runs as one statement on the
    user's shard). The rows written are the same. Adds `memstrata_check_fence`, the write fence as a
    statement, which the store pipelines with the writes it checks (an item written in one round trip)."""
    cur.execute("SELECT '[1]'::vector")  # pgvector's library loaded, as in m003
    _create_function(cur, ctx, SAVE_SIGNATURE, SAVE)
    _create_function(cur, ctx, CHECK_FENCE_SIGNATURE, CHECK_FENCE)


Migration = Callable[[Cursor, Context], None]
MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "tables", m001_tables),
    (2, "row level security", m002_row_level_security),
    (3, "sql functions", m003_functions),
    (4, "fillfactor for access tracking, kind index", m004_room_for_hot_updates),
    (5, "keyword search: no GIN pending list, narrow ranking", m005_keyword_search_speed),
    (6, "access statistics in a narrow table", m006_access_table),
    (7, "functions routable on Citus", m007_routable_functions),
    (8, "erasure generations (write fence)", m008_erasure_fence),
    (9, "keyword terms computed in Python, BM25 with per-user statistics", m009_keyword_terms),
    (10, "per-user data keys (crypto-shredding)", m010_user_keys),
    (11, "keyword postings: BM25 ranked from a narrow table", m011_keyword_postings),
    (12, "RPC functions judge currency at the caller's as_of", m012_rpc_functions_as_of),
    (13, "one function call per save", m013_one_call_saves),
    (14, "the write fence checked inside the save call", m014_fence_in_the_save_call),
    (15, "static save statements where Citus is not loaded, the fence as a statement", m015_static_save_statements),
)
LATEST = MIGRATIONS[-1][0]


def applied_version(cur: Cursor) -> int:
    """Highest applied migration (0 for an empty schema)."""
    cur.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
    row = cur.fetchone()
    if not row or not row[0]:
        return 0
    cur.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
    row = cur.fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection[Any], *, target: int = LATEST) -> int:
    """Apply pending migrations through `conn` (the owner), up to `target`; return how many ran.

    Raises `StoreError` when the schema is newer than this code or pgvector is missing.
    """
    with conn.cursor() as cur:
        if applied_version(cur) == target:
            return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || %s))", [_LOCK_KEY])
        vector_schema = _ensure_vector_extension(conn, cur)
        cur.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        version = applied_version(cur)
        if version > LATEST:
            raise StoreError(f"the database schema is at version {version}, newer than this memstrata ({LATEST})")
        cur.execute("SELECT current_schema(), current_user")
        schema, owner = _one(cur)
        ctx = Context(schema=str(schema), vector_schema=vector_schema, owner=str(owner))
        pending = [m for m in MIGRATIONS if version < m[0] <= target]
        for number, name, migration in pending:
            migration(cur, ctx)
            cur.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", [number, name])
    if pending:  # on a schema already distributed on Citus, new tables are distributed too
        distribute_new_tables(conn, USER_TABLES)
    return len(pending)


def grant_app_role(conn: psycopg.Connection[Any], app_role: str) -> None:
    """Give the application role what it needs, no more (idempotent; skipped when already granted).

    Serialized by the schema advisory lock: concurrent GRANTs on one object fail in PostgreSQL
    ("tuple concurrently updated").
    """
    with conn.cursor() as cur:
        if _app_role_ready(cur, app_role):
            return
    role = sql.Identifier(app_role)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || %s))", [_LOCK_KEY])
        if _app_role_ready(cur, app_role):
            return
        for table in USER_TABLES:
            cur.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(sql.Identifier(table), role))
        cur.execute(sql.SQL("GRANT SELECT ON meta, schema_migrations TO {}").format(role))
        cur.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE ON {} TO {}").format(sql.Identifier(FENCE_TABLE), role))
        for signature in DEFINER_FUNCTIONS:
            cur.execute(sql.SQL("GRANT EXECUTE ON FUNCTION " + signature + " TO {}").format(role))


def _app_role_ready(cur: Cursor, app_role: str) -> bool:
    checks = [
        *(f"has_table_privilege(%s, '{t}', 'SELECT, INSERT, UPDATE, DELETE')" for t in USER_TABLES),
        "has_table_privilege(%s, 'meta', 'SELECT')",
        "has_table_privilege(%s, 'schema_migrations', 'SELECT')",
        f"has_table_privilege(%s, '{FENCE_TABLE}', 'SELECT, INSERT, UPDATE')",
        *(f"has_function_privilege(%s, '{f}', 'EXECUTE')" for f in DEFINER_FUNCTIONS),
    ]
    cur.execute("SELECT " + " AND ".join(checks), [app_role] * len(checks))
    return bool(_one(cur)[0])


def bind_vector_column(conn: psycopg.Connection[Any], name: str, dimensions: int, url: str) -> tuple[str, int]:
    """Record the embedder, or check it against the recorded one; return the recorded (name, dims).

    On first use: types the embedding column `vector(dimensions)` and builds the HNSW cosine index.
    """
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || %s))", [_LOCK_KEY])
        cur.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dimensions')")
        rows = dict(cur.fetchall())
        if rows:
            check_embedder(rows, name, dimensions, url)
            return name, dimensions
        cur.execute(
            "INSERT INTO meta (key, value) VALUES ('embedder', %s), ('dimensions', %s)",
            [name, str(dimensions)],
        )
        cur.execute("SET LOCAL lock_timeout = '10s'")
        try:
            with conn.transaction():
                cur.execute(sql.SQL("ALTER TABLE memories ALTER COLUMN embedding TYPE vector({})").format(dimensions))
        except psycopg.errors.DataException as exc:
            raise EmbeddingMismatch(
                f"{url} already holds vectors of another dimension than {dimensions}: {exc}"
            ) from exc
        if dimensions <= HNSW_MAX_DIMENSIONS:
            cur.execute(
                "CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON memories "
                "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
    return name, dimensions


def check_embedder(recorded: dict[str, str], name: str, dimensions: int, url: str) -> None:
    if recorded.get("embedder") != name or recorded.get("dimensions") != str(dimensions):
        raise EmbeddingMismatch(
            f"{url} was built with embedder {recorded.get('embedder')!r} "
            f"({recorded.get('dimensions')} dims), not {name!r} ({dimensions} dims); "
            "use the same embedder or a new store"
        )


def _ensure_vector_extension(conn: psycopg.Connection[Any], cur: Cursor) -> str:
    """The schema of the `vector` extension, creating the extension if this role may."""
    cur.execute(_VECTOR_SCHEMA)
    row = cur.fetchone()
    if row:
        return str(row[0])
    try:
        with conn.transaction():
            cur.execute("CREATE EXTENSION vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            "the pgvector extension is not installed in this database and this role may not create it; "
            "run `CREATE EXTENSION vector` as a superuser once"
        ) from exc
    except psycopg.Error as exc:
        raise StoreError(f"pgvector is not available on this server: {exc}") from exc
    cur.execute(_VECTOR_SCHEMA)
    return str(_one(cur)[0])


def _one(cur: Cursor) -> tuple[Any, ...]:
    row = cur.fetchone()
    if row is None:  # pragma: no cover - the queries above always return a row
        raise StoreError("the database returned no row")
    return tuple(row)
