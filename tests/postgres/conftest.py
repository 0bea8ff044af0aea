"""Fixtures for the PostgreSQL-specific tests: a fresh database per test, the store opened as the
NON-superuser application role, and raw connections as that role, the owner and the superuser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from memstrata.storage.postgres import PostgresStore
from tests.support.pg import connect_admin, database_of, postgres_urls

DIMENSIONS = 64
EMBEDDER = "hashing-64"


@pytest.fixture
def urls() -> Iterator[tuple[str, str]]:
    """(app_url, owner_url) of a fresh database."""
    with postgres_urls() as pair:
        yield pair


@pytest.fixture
def app_url(urls: tuple[str, str]) -> str:
    return urls[0]


@pytest.fixture
def owner_url(urls: tuple[str, str]) -> str:
    return urls[1]


@pytest.fixture
def pg_store(app_url: str, owner_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore.open(app_url, owner_url=owner_url)
    store.bind_embedder(EMBEDDER, DIMENSIONS)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def app_conn(pg_store: PostgresStore, app_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A raw autocommit connection as the application role (schema already migrated)."""
    with psycopg.connect(app_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def owner_conn(pg_store: PostgresStore, owner_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def admin_conn(pg_store: PostgresStore, app_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A superuser connection to the test database (superusers bypass RLS: use for setup and checks)."""
    with connect_admin(database_of(app_url)) as conn:
        yield conn
