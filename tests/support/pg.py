"""PostgreSQL helpers for tests: a throwaway database with an owner role and an application role.

`MEMSTRATA_TEST_POSTGRES_URL` names a superuser connection (default
`postgresql://root@127.0.0.1:5432/postgres`). When the server cannot be reached the test is
skipped, except under `CI=true`, where it fails: a green CI must never hide a backend that never ran.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from memstrata.storage.postgres import redact_url
from memstrata.storage.postgres.store import set_local

ENV_VAR = "MEMSTRATA_TEST_POSTGRES_URL"
DEFAULT_ADMIN_URL = "postgresql://root@127.0.0.1:5432/postgres"


def admin_url() -> str:
    return os.environ.get(ENV_VAR) or DEFAULT_ADMIN_URL


def service_missing(reason: str) -> None:
    """Skip locally; fail under CI=true."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run)")
    pytest.skip(reason)


def connect_admin(dbname: str | None = None) -> psycopg.Connection[Any]:
    """An autocommit superuser connection (to `dbname`, or the database of the admin URL)."""
    url = admin_url()
    try:
        if dbname is None:
            return psycopg.connect(url, autocommit=True, connect_timeout=3)
        return psycopg.connect(url, autocommit=True, connect_timeout=3, dbname=dbname)
    except psycopg.OperationalError as exc:
        service_missing(f"PostgreSQL is not reachable at {redact_url(url)} (set {ENV_VAR}): {exc}")
        raise  # unreachable: skip/fail raise


def role_url(user: str, password: str, dbname: str) -> str:
    """A postgresql:// URL to `dbname` on the admin URL's server, as `user`."""
    params = conninfo_to_dict(admin_url())
    host = str(params.get("host") or "127.0.0.1")
    port = str(params.get("port") or 5432)
    return f"postgresql://{quote(user)}:{quote(password)}@{host}:{port}/{quote(dbname)}"


@contextmanager
def postgres_urls() -> Iterator[tuple[str, str]]:
    """A fresh database `memstrata_test_<random>` with pgvector; yields (app_url, owner_url).

    The owner role owns the database (it runs migrations); the app role is NOSUPERUSER
    NOBYPASSRLS, so row-level security applies to it. Database and roles are dropped afterwards.
    """
    suffix = secrets.token_hex(4)
    dbname, owner, app = f"memstrata_test_{suffix}", f"memstrata_owner_{suffix}", f"memstrata_app_{suffix}"
    owner_password, app_password = secrets.token_hex(8), secrets.token_hex(8)
    with connect_admin() as admin:
        for role, password in ((owner, owner_password), (app, app_password)):
            admin.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        try:
            admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(dbname), sql.Identifier(owner)))
            with connect_admin(dbname) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            yield role_url(app, app_password, dbname), role_url(owner, owner_password, dbname)
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))
            for role in (app, owner):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def set_user(conn: psycopg.Connection[Any] | psycopg.Cursor[Any], user: str) -> None:
    """Set `app.user_id` for the current transaction the way the store does: SET LOCAL, with
    `citus.propagate_set_commands = 'local'` so that on Citus it reaches the shards (a placeholder
    setting without effect on plain PostgreSQL)."""
    conn.execute("SET LOCAL citus.propagate_set_commands = 'local'")
    conn.execute(set_local("app.user_id", user))


def database_of(url: str) -> str:
    return str(conninfo_to_dict(url)["dbname"])


def user_of(url: str) -> str:
    return str(conninfo_to_dict(url)["user"])
