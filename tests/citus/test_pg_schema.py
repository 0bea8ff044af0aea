"""tests/postgres/test_schema.py against PostgreSQL on Citus."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from memstrata.storage.postgres.citus import forced_tables, unforce_row_security
from memstrata.storage.postgres.migrations import FENCE_TABLE, USER_TABLES
from tests.postgres.test_schema import *  # noqa: F403 - collected here with the Citus fixtures
from tests.postgres.test_schema import user_tables

pytestmark = pytest.mark.citus

# On Citus row-level security is enabled but not forced (shard moves replicate as a member of the owner):
# its counterpart is below.
del test_every_user_table_is_known_and_forced_under_rls  # noqa: F821


def test_every_user_table_is_known_and_under_rls_not_forced(owner_conn: psycopg.Connection[Any]) -> None:
    assert user_tables(owner_conn) == sorted(USER_TABLES)
    for table in (*USER_TABLES, FENCE_TABLE):
        row = owner_conn.execute(
            "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = %s::regclass", [table]
        ).fetchone()
        assert row == (True, False), table
    assert forced_tables(owner_conn) == []


def test_unforcing_reaches_a_schema_distributed_forced(owner_conn: psycopg.Connection[Any]) -> None:
    """A schema distributed before RLS was un-forced (FORCE on every shard) is fixed by running
    `distribute` again: the ALTER reaches every shard."""
    for table in USER_TABLES:
        owner_conn.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    assert forced_tables(owner_conn) == sorted(USER_TABLES)
    assert sorted(unforce_row_security(owner_conn)) == sorted(USER_TABLES)
    forced_shards = owner_conn.execute(
        "SELECT result FROM run_command_on_shards('memories', "
        "$$SELECT relforcerowsecurity FROM pg_class WHERE oid = '%s'::regclass$$)"
    ).fetchall()
    assert forced_shards and {r for (r,) in forced_shards} == {"f"}
