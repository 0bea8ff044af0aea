"""A throwaway store on Citus for the benchmarks (`--store citus`): a fresh schema on the coordinator,
distributed like `memstrata db distribute` does, with an owner and a NOSUPERUSER NOBYPASSRLS app role.

The coordinator database must have the `citus` and `vector` extensions on every node and the workers
registered (`scripts/citus.sh` makes `memstrata` on 127.0.0.1:5440); `MEMSTRATA_BENCH_CITUS_URL` names
a superuser connection to it. A schema rather than a database: Citus does not propagate CREATE DATABASE.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

from memstrata import StoreError

CITUS_ENV = "MEMSTRATA_BENCH_CITUS_URL"
DEFAULT_CITUS_URL = "postgresql://root@127.0.0.1:5440/memstrata"
BENCH_SHARDS = 32


@contextmanager
def throwaway_citus(admin: str | None = None, *, shard_count: int = BENCH_SHARDS) -> Iterator[tuple[str, str]]:
    """Yields (app_url, owner_url) of a migrated, distributed schema; drops schema and roles afterwards."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    from memstrata.storage.postgres.citus import distribute
    from memstrata.storage.postgres.migrations import USER_TABLES, grant_app_role, migrate

    admin = admin or os.environ.get(CITUS_ENV) or DEFAULT_CITUS_URL
    suffix = secrets.token_hex(4)
    schema, owner, app = f"memstrata_bench_{suffix}", f"memstrata_bench_owner_{suffix}", f"memstrata_bench_app_{suffix}"
    passwords = {owner: secrets.token_hex(8), app: secrets.token_hex(8)}
    params = conninfo_to_dict(admin)
    host, port, dbname = params.get("host") or "127.0.0.1", params.get("port") or 5440, params["dbname"]
    options = quote(f"-csearch_path={schema},public", safe="")

    def url(role: str) -> str:
        return f"postgresql://{quote(role)}:{quote(passwords[role])}@{host}:{port}/{dbname}?options={options}"

    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the Citus coordinator for a throwaway benchmark schema: {exc}") from exc
    with conn:
        for role in (owner, app):
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(passwords[role])
                )
            )
        try:
            conn.execute(
                sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(sql.Identifier(schema), sql.Identifier(owner))
            )
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), sql.Identifier(app)))
            with psycopg.connect(url(owner), autocommit=True) as owner_conn:
                migrate(owner_conn)
                distribute(owner_conn, USER_TABLES, shard_count=shard_count)
                grant_app_role(owner_conn, app)
            yield url(app), url(owner)
        finally:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            for role in (app, owner):
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
