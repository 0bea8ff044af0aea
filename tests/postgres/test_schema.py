"""The live schema, read from the catalogs: the rules docs/postgres.md promises hold in the database.

Rules are checked for EVERY table with a user_id column, so a table added later is covered too.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from memstrata.errors import StoreError
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.migrations import LATEST, USER_TABLES
from memstrata.storage.postgres.sql_functions import CURRENT_FUNCTIONS, DEFINER_FUNCTIONS

pytestmark = pytest.mark.postgres


def user_tables(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
        "AND a.attname = 'user_id' AND NOT a.attisdropped ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def test_every_user_table_is_known_and_forced_under_rls(owner_conn: psycopg.Connection[Any]) -> None:
    assert user_tables(owner_conn) == sorted(USER_TABLES)
    for table in USER_TABLES:
        row = owner_conn.execute(
            "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = %s::regclass", [table]
        ).fetchone()
        assert row == (True, True), table


def test_user_id_leads_every_primary_key_and_unique_constraint(owner_conn: psycopg.Connection[Any]) -> None:
    rows = owner_conn.execute(
        "SELECT con.conrelid::regclass::text, con.conname, "
        "(SELECT attname FROM pg_attribute WHERE attrelid = con.conrelid AND attnum = con.conkey[1]) "
        "FROM pg_constraint con WHERE con.contype IN ('p', 'u') AND con.conrelid = ANY(%s::regclass[])",
        [list(USER_TABLES)],
    ).fetchall()
    assert {r[0] for r in rows} == set(USER_TABLES)
    assert all(first == "user_id" for _, _, first in rows), rows
    unique_indexes = owner_conn.execute(
        "SELECT indexrelid::regclass::text, (SELECT attname FROM pg_attribute "
        "WHERE attrelid = indrelid AND attnum = indkey[0]) FROM pg_index "
        "WHERE indisunique AND indrelid = ANY(%s::regclass[])",
        [list(USER_TABLES)],
    ).fetchall()
    assert unique_indexes and all(first == "user_id" for _, first in unique_indexes), unique_indexes


def test_no_foreign_keys_and_non_empty_user_ids(owner_conn: psycopg.Connection[Any]) -> None:
    fks = owner_conn.execute(
        "SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = current_schema()::regnamespace"
    ).fetchall()
    assert fks == []
    for table in USER_TABLES:
        checks = owner_conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'c' AND conrelid = %s::regclass",
            [table],
        ).fetchall()
        assert ("CHECK ((user_id <> ''::text))",) in checks, (table, checks)


def test_isolation_policies_compare_user_id_with_the_transaction_setting(
    owner_conn: psycopg.Connection[Any],
) -> None:
    rows = owner_conn.execute(
        "SELECT tablename, policyname, roles::text[], cmd, qual, with_check FROM pg_policies "
        "WHERE schemaname = current_schema() ORDER BY 1, 2"
    ).fetchall()
    owner = owner_conn.execute("SELECT current_user").fetchone()
    by_name = {r[1]: r for r in rows}
    for table in USER_TABLES:
        _, _, roles, cmd, qual, check = by_name[f"{table}_user_isolation"]
        assert roles == ["public"] and cmd == "ALL"
        assert qual == check == "(user_id = current_setting('app.user_id'::text, true))"
    for table in ("memories", "items"):  # the definer helpers' read path: owner only, SELECT only
        _, _, roles, cmd, qual, check = by_name[f"{table}_owner_read"]
        assert owner is not None and roles == [owner[0]] and cmd == "SELECT" and qual == "true" and check is None
    _, _, roles, cmd, qual, check = by_name["user_keys_owner_rewrap"]  # store rotate-master-key, as the owner
    assert owner is not None and roles == [owner[0]] and cmd == "ALL" and qual == check == "true"
    assert set(by_name) == {f"{t}_user_isolation" for t in USER_TABLES} | {
        "memories_owner_read",
        "items_owner_read",
        "erasures_user_isolation",
        "user_keys_owner_rewrap",
    }


def test_indexes_hnsw_postings_and_user_btrees(owner_conn: psycopg.Connection[Any]) -> None:
    defs = {
        name: definition
        for name, definition in owner_conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
        ).fetchall()
    }
    assert "USING hnsw (embedding vector_cosine_ops)" in defs["memories_embedding_hnsw"]
    assert "memories_keyword_terms" not in defs  # keyword search reads keyword_postings (migration 11)
    assert "(user_id, term, memory_id) INCLUDE (frequency, length)" in defs["keyword_postings_pkey"]
    assert "memories_tsv" not in defs  # the text is never indexed by SQL
    assert "(user_id, created_at, seq)" in defs["memories_user_created"]
    column = owner_conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'memories'::regclass "
        "AND attname = 'embedding'"
    ).fetchone()
    assert column == ("vector(64)",)


def test_functions_definer_only_where_documented(owner_conn: psycopg.Connection[Any], app_url: str) -> None:
    app_role = psycopg.conninfo.conninfo_to_dict(app_url)["user"]
    for signature in CURRENT_FUNCTIONS:
        definer, config = owner_conn.execute(
            "SELECT prosecdef, proconfig FROM pg_proc WHERE oid = %s::regprocedure", [signature]
        ).fetchone() or (None, None)
        assert definer is (signature in DEFINER_FUNCTIONS), signature
        assert any(c.startswith("search_path=") and c.endswith("pg_temp") for c in config), (
            signature,
            config,
        )
        public = owner_conn.execute(
            "SELECT has_function_privilege('public', %s, 'EXECUTE'), has_function_privilege(%s, %s, 'EXECUTE')",
            [signature, app_role, signature],
        ).fetchone()
        assert public == (not definer, True), signature


def test_migrations_are_recorded_and_run_once(pg_store: PostgresStore, app_url: str, owner_url: str) -> None:
    with psycopg.connect(owner_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()]
    assert versions == list(range(1, LATEST + 1))
    errors: list[BaseException] = []

    def reopen() -> None:
        try:
            PostgresStore.open(app_url, owner_url=owner_url).close()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=reopen) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_concurrent_first_opens_migrate_once(urls: tuple[str, str]) -> None:
    app_url, owner_url = urls
    errors: list[BaseException] = []

    def open_and_bind() -> None:
        try:
            with PostgresStore.open(app_url, owner_url=owner_url) as store:
                store.bind_embedder("hashing-64", 64)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_bind) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with psycopg.connect(owner_url) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (LATEST,)


def test_a_newer_schema_is_refused(pg_store: PostgresStore, app_url: str, owner_url: str) -> None:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, 'from the future')", [LATEST + 1])
    with pytest.raises(StoreError, match=f"version {LATEST + 1}, newer"):
        PostgresStore.open(app_url, owner_url=owner_url)
