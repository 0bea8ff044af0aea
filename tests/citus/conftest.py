"""Fixtures of the Citus tests: every fixture of tests/postgres (and the contract suite's `store`),
backed by a fresh schema distributed on the local Citus cluster (coordinator 5440, workers 5441-5442).

The test modules here import the PostgreSQL store's tests and the store contract suite, so the same
tests run against Citus with these fixtures in place of the single-node ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from memstrata.storage.postgres import PostgresStore
from tests.support.citus import CitusSchema, citus_schema, connect_coordinator

DIMENSIONS = 64
EMBEDDER = "hashing-64"


@pytest.fixture
def citus() -> Iterator[CitusSchema]:
    with citus_schema() as schema:
        yield schema


@pytest.fixture
def urls(citus: CitusSchema) -> tuple[str, str]:
    """(app_url, owner_url) of a fresh distributed schema."""
    return citus.app_url, citus.owner_url


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
def store(pg_store: PostgresStore) -> PostgresStore:
    """The store contract suite's backend: PostgreSQL on Citus."""
    return pg_store


@pytest.fixture
def app_conn(pg_store: PostgresStore, app_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(app_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def owner_conn(pg_store: PostgresStore, owner_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def admin_conn(pg_store: PostgresStore, citus: CitusSchema) -> Iterator[psycopg.Connection[Any]]:
    """A superuser connection to the coordinator, in the test's schema (bypasses RLS)."""
    with connect_coordinator(options=f"-csearch_path={citus.schema},public") as conn:
        yield conn
