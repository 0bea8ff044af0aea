"""Backends for the hostile suite: each test runs on SQLite (a file, with its -wal/-shm) and on
PostgreSQL as the non-superuser application role, and can look for a marker string in everything
the backend keeps (the SQLite file bytes, or a `pg_dump` of the database)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.storage.base import Store
from tests.conftest import TEST_DIMENSIONS


@dataclass
class Backend:
    """One store kind: `open_store()` opens another connection to the same data (as a second process
    would); `traces(marker)` counts the marker's occurrences in everything the backend keeps."""

    kind: str
    open_store: Callable[[], Store]
    traces: Callable[[str], int]
    url: str
    owner_url: str | None = None
    """PostgreSQL: the owner role's URL (migrations), for a second process opening the store."""
    opened: list[Store] = field(default_factory=list)

    def memory(self, **kwargs: Any) -> Memory:
        store = self.open_store()
        self.opened.append(store)
        return Memory(store=store, embedder=HashingEmbedder(TEST_DIMENSIONS), **kwargs)


def sqlite_traces(path: Path) -> Callable[[str], int]:
    def count(marker: str) -> int:
        needle = marker.encode("utf-8")
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        return sum(f.read_bytes().count(needle) for f in files if f.exists())

    return count


def pg_dump_traces(dbname: str) -> Callable[[str], int]:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from tests.support.pg import admin_url

    params = conninfo_to_dict(admin_url()) | {"dbname": dbname}

    def count(marker: str) -> int:
        dump = subprocess.run(
            ["pg_dump", "--data-only", "-d", make_conninfo(**params)], capture_output=True, check=True, timeout=60
        ).stdout
        return dump.count(marker.encode("utf-8"))

    return count


@pytest.fixture(scope="module")
def postgres_database() -> Iterator[tuple[str, str]]:
    """One throwaway database (owner and application roles, migrations) per test module: creating,
    migrating and dropping one took about 0.7 s per test. `backend` empties it before each test."""
    from tests.support.pg import postgres_urls

    with postgres_urls() as urls:
        yield urls


def empty_database(dbname: str) -> None:
    """End every other session of the database (a test's leftover or killed connections, their
    advisory locks) and truncate every table but the schema's bookkeeping: what a test then sees is
    what a freshly migrated database holds."""
    from psycopg import sql

    from tests.support.pg import connect_admin

    with connect_admin(dbname) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        tables = [
            row[0]
            for row in admin.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename NOT IN ('meta', 'schema_migrations')"
            ).fetchall()
        ]
        if tables:
            admin.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(", ").join(map(sql.Identifier, tables))))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        from memstrata.storage.sqlite import SQLiteStore

        path = tmp_path / "m.db"
        found = Backend("sqlite", lambda: SQLiteStore(path), sqlite_traces(path), f"sqlite:///{path}")
        yield found
        for store in found.opened:
            store.close()
        return
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import database_of

    app_url, owner_url = request.getfixturevalue("postgres_database")
    empty_database(database_of(app_url))
    found = Backend(
        "postgres",
        lambda: PostgresStore.open(app_url, owner_url=owner_url),
        pg_dump_traces(database_of(app_url)),
        app_url,
        owner_url,
    )
    yield found
    for store in found.opened:
        store.close()
