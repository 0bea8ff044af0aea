"""Citus helpers for tests: a fresh, distributed schema per test on the local Citus cluster.

`MEMSTRATA_TEST_CITUS_URL` names a superuser connection to a database on the coordinator that has the
`citus` and `vector` extensions on every node and the workers registered (default
`postgresql://root@127.0.0.1:5440/memstrata`, made by `scripts/citus.sh`). Each test gets its own
schema (Citus propagates CREATE SCHEMA and roles to the workers, not CREATE DATABASE), an owner role
that migrates and distributes it, and a NOSUPERUSER NOBYPASSRLS application role. When the coordinator
cannot be reached the test is skipped, except under `CI=true`, where it fails.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from memstrata.storage.postgres import redact_url
from memstrata.storage.postgres.citus import distribute
from memstrata.storage.postgres.migrations import USER_TABLES, migrate
from tests.conftest import service_missing

ENV_VAR = "MEMSTRATA_TEST_CITUS_URL"
DEFAULT_URL = "postgresql://root@127.0.0.1:5440/memstrata"
TEST_SHARDS = 8
"""Shards per user table in tests: four per worker, enough for tenants on different shards and nodes."""


def coordinator_url() -> str:
    return os.environ.get(ENV_VAR) or DEFAULT_URL


def connect_coordinator(**overrides: Any) -> psycopg.Connection[Any]:
    """An autocommit superuser connection to the coordinator's test database."""
    url = coordinator_url()
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=3, **overrides)
    except psycopg.OperationalError as exc:
        service_missing(f"Citus is not reachable at {redact_url(url)} (run scripts/citus.sh; set {ENV_VAR}): {exc}")
        raise  # unreachable: skip/fail raise


@dataclass(frozen=True, slots=True)
class CitusSchema:
    """One test's schema on the Citus cluster, and URLs of its roles (search_path = schema, public)."""

    schema: str
    app_url: str
    owner_url: str
    app_role: str
    workers: tuple[tuple[str, int], ...]

    def url_on(self, host: str, port: int, *, role: str) -> str:
        """A URL to the same database and schema on another node, as `role` (the app role's password)."""
        params = conninfo_to_dict(self.app_url)
        password = params.get("password") if role == self.app_role else conninfo_to_dict(self.owner_url)["password"]
        return _url(role, str(password), host, port, str(params["dbname"]), self.schema)


def _url(user: str, password: str, host: str, port: int, dbname: str, schema: str) -> str:
    options = quote(f"-csearch_path={schema},public", safe="")
    return f"postgresql://{quote(user)}:{quote(password)}@{host}:{port}/{quote(dbname)}?options={options}"


@contextmanager
def citus_schema(*, shard_count: int = TEST_SHARDS) -> Iterator[CitusSchema]:
    """A fresh schema, migrated and distributed (`memstrata db distribute`'s steps) by its owner role;
    the schema and both roles are dropped afterwards on every node."""
    suffix = secrets.token_hex(4)
    schema, owner, app = f"memstrata_test_{suffix}", f"memstrata_owner_{suffix}", f"memstrata_app_{suffix}"
    owner_password, app_password = secrets.token_hex(8), secrets.token_hex(8)
    with connect_coordinator() as admin:
        params = conninfo_to_dict(coordinator_url())
        host, port, dbname = (
            str(params.get("host") or "127.0.0.1"),
            int(params.get("port") or 5440),
            str(params["dbname"]),
        )
        workers = tuple((str(h), int(p)) for h, p in admin.execute("SELECT * FROM citus_get_active_worker_nodes()"))
        for role, password in ((owner, owner_password), (app, app_password)):
            admin.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        try:
            admin.execute(
                sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(sql.Identifier(schema), sql.Identifier(owner))
            )
            admin.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), sql.Identifier(app)))
            owner_url = _url(owner, owner_password, host, port, dbname, schema)
            with psycopg.connect(owner_url, autocommit=True) as conn:
                migrate(conn)
                distribute(conn, USER_TABLES, shard_count=shard_count)
            yield CitusSchema(schema, _url(app, app_password, host, port, dbname, schema), owner_url, app, workers)
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            for role in (app, owner):
                admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
