"""Distributing the PostgreSQL store's schema on Citus (docs/postgres.md, "Scale-out").

Every user table is hash-distributed by `user_id` and colocated with `memories`, so all of one user's
rows live on one shard group and every per-user statement is routed to one worker. `meta` and
`schema_migrations` become reference tables (a copy on every node), so the store opens on any node.
Run through the owner role, on the coordinator, after the migrations (`distribute` migrates first).
`migrate` calls `distribute_new_tables` after each run on a distributed schema, so a later migration's
new user table is distributed as well.

Row-level security stays ENABLED on every distributed table, but not FORCED (`unforce_row_security`):
Citus moves a shard (`citus_rebalance_start`, `citus_move_shard_placement`) by logical replication, and
on PostgreSQL 15 the subscription applies changes as a role Citus creates for the move, a member of the
table owner that is neither superuser nor BYPASSRLS. PostgreSQL refuses to apply changes as any role
RLS applies to ("cannot replicate into relation with row-level security enabled"), and with FORCE it
applies to the owner and its members. Without FORCE the owner (and the move's role) bypasses RLS, as a
table owner does in plain PostgreSQL; the application role, which owns nothing, is bound by the
policies exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ...errors import ConfigurationError, StoreError
from .sql_functions import LOCK_USER_SIGNATURE, SAVE_SIGNATURE

DISTRIBUTION_COLUMN = "user_id"
ANCHOR_TABLE = "memories"
"""The table every other user table is colocated with."""
REFERENCE_TABLES = ("meta", "schema_migrations", "erasures")
"""Tables with a copy on every node. `erasures` names users by the hash of their id (storage/fence.py), so
it cannot be colocated with the user's rows; as a reference table it is read locally where a save runs (the
fence check of `memstrata_save`, delegated to the user's worker, migration 14). Erasure writes it on every
node (rare). A schema distributed before had it hash-distributed by `user_key`: `distribute` converts it
(`REDISTRIBUTED_AS_REFERENCE`)."""
REDISTRIBUTED_AS_REFERENCE = ("erasures",)
"""Reference tables that earlier versions hash-distributed: undistributed, then made reference tables."""
DEFAULT_SHARD_COUNT = 32
DELEGATED_FUNCTIONS = {SAVE_SIGNATURE: ("p_user_id", False), LOCK_USER_SIGNATURE: ("p_user_id", True)}
"""Functions distributed by their user argument (and whether with `force_delegation`), colocated with
`memories`: the coordinator sends a call to the worker holding that user's shards. `memstrata_save` is
delegated when it is a statement of its own (a save's usual path); inside the store's explicit
transactions (a save with items or a data key to read) it runs on the coordinator, each of
its statements routed, because a forced delegation cannot write on another node, as it must when the
user's shard moves while the call runs. `memstrata_lock_user` (erasure's lock where saves take it)
reads no table and is delegated inside erasure's transaction too."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """What `distribute` did: tables newly distributed or made reference tables, and the shard count."""

    distributed: tuple[str, ...]
    reference: tuple[str, ...]
    shard_count: int


def has_citus(conn: psycopg.Connection[Any]) -> bool:
    """Whether the `citus` extension is installed in this database."""
    row = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'").fetchone()
    return bool(row and row[0])


def citus_tables(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """Table name -> 'distributed' or 'reference' for the tables Citus manages in the current schema
    (read from `pg_dist_partition`: hash-distributed, or replicated to every node)."""
    rows = conn.execute(
        "SELECT c.relname, CASE WHEN p.partmethod = 'h' THEN 'distributed' "
        "WHEN p.repmodel = 't' THEN 'reference' ELSE 'local' END "
        "FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid "
        "WHERE c.relnamespace = current_schema()::regnamespace"
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def is_distributed(conn: psycopg.Connection[Any]) -> bool:
    """Whether this database has Citus and the store's anchor table is distributed."""
    return has_citus(conn) and citus_tables(conn).get(ANCHOR_TABLE) == "distributed"


def shard_count_of(conn: psycopg.Connection[Any], table: str) -> int:
    row = conn.execute("SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = %s::regclass", [table]).fetchone()
    return int(row[0]) if row else 0


def distribute(
    conn: psycopg.Connection[Any], user_tables: tuple[str, ...], *, shard_count: int = DEFAULT_SHARD_COUNT
) -> Distribution:
    """Make `meta`/`schema_migrations` reference tables and distribute `user_tables` by `user_id`,
    colocated with `memories` (idempotent: tables Citus already manages are left as they are).

    `conn` is an autocommit connection of the owner role to the coordinator, schema migrated.
    """
    if not 1 <= shard_count <= 64000:
        raise ConfigurationError(f"shard count must be between 1 and 64000, got {shard_count}")
    if not has_citus(conn):
        raise StoreError("the citus extension is not installed in this database: run `CREATE EXTENSION citus` first")
    known = citus_tables(conn)
    for table in REDISTRIBUTED_AS_REFERENCE:
        if known.get(table) == "distributed":
            conn.execute("SELECT undistribute_table(%s)", [table])
            del known[table]
    reference = tuple(t for t in REFERENCE_TABLES if t not in known and _exists(conn, t))
    for table in reference:
        conn.execute("SELECT create_reference_table(%s)", [table])
    distributed = []
    for table in (ANCHOR_TABLE, *(t for t in user_tables if t != ANCHOR_TABLE)):
        if table in known:
            continue
        if table == ANCHOR_TABLE:
            conn.execute(
                "SELECT create_distributed_table(%s, %s, shard_count => %s, colocate_with => 'none')",
                [table, DISTRIBUTION_COLUMN, shard_count],
            )
        else:
            conn.execute(
                "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                [table, DISTRIBUTION_COLUMN, ANCHOR_TABLE],
            )
        distributed.append(table)
    for signature, (argument, forced) in DELEGATED_FUNCTIONS.items():
        if _function_exists(conn, signature) and not _delegated(conn, signature):
            conn.execute(
                "SELECT create_distributed_function(%s, %s, colocate_with => %s, force_delegation => %s)",
                [signature, argument, ANCHOR_TABLE, forced],
            )
    unforce_row_security(conn)
    return Distribution(tuple(distributed), reference, shard_count_of(conn, ANCHOR_TABLE))


def forced_tables(conn: psycopg.Connection[Any]) -> list[str]:
    """Distributed and reference tables of the current schema whose row-level security is FORCED (applies to
    the owner)."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND p.partmethod IN ('h', 'n') "
        "AND c.relforcerowsecurity "
        "ORDER BY 1"
    ).fetchall()
    return [str(name) for (name,) in rows]


def unforce_row_security(conn: psycopg.Connection[Any]) -> list[str]:
    """`NO FORCE ROW LEVEL SECURITY` on every distributed table still forced (Citus propagates it to the
    shards), so shard moves by logical replication can apply (module docstring). RLS stays enabled: the
    application role sees only its user's rows. Returns the tables changed."""
    tables = forced_tables(conn)
    for table in tables:
        conn.execute(sql.SQL("ALTER TABLE {} NO FORCE ROW LEVEL SECURITY").format(sql.Identifier(table)))
    return tables


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [table]).fetchone()
    return bool(row and row[0])


def _function_exists(conn: psycopg.Connection[Any], signature: str) -> bool:
    row = conn.execute("SELECT to_regprocedure(%s) IS NOT NULL", [signature]).fetchone()
    return bool(row and row[0])


def _delegated(conn: psycopg.Connection[Any], signature: str) -> bool:
    """Whether the function is distributed with a distribution argument (its calls can be delegated)."""
    row = conn.execute(
        "SELECT count(*) FROM pg_dist_object WHERE classid = 'pg_proc'::regclass AND objid = %s::regprocedure "
        "AND distribution_argument_index IS NOT NULL",
        [signature],
    ).fetchone()
    return bool(row and row[0])


def distribute_new_tables(conn: psycopg.Connection[Any], user_tables: tuple[str, ...]) -> tuple[str, ...]:
    """After migrations on a distributed schema: distribute the user tables (and reference tables) the
    migrations added; nothing on plain PostgreSQL or a schema not yet distributed."""
    if not is_distributed(conn):
        return ()
    done = distribute(conn, user_tables, shard_count=shard_count_of(conn, ANCHOR_TABLE))  # and un-forces RLS
    return done.distributed + done.reference
