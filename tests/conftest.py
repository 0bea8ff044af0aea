"""Shared fixtures. Backends are parametrized: every contract test runs on every store.

Postgres and Redis tests skip locally when the service is unreachable, and FAIL under CI=true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.storage import open_store
from memstrata.storage.base import Store
from memstrata.storage.sqlite import SQLiteStore

TEST_DIMENSIONS = 64


def service_missing(reason: str) -> None:
    """Skip locally, fail in CI: a green CI must never hide a backend that did not run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: required services must run)")
    pytest.skip(reason)


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(TEST_DIMENSIONS)


@pytest.fixture(
    params=[
        "sqlite",
        "sqlcipher",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("postgres-sealed", marks=pytest.mark.postgres),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each backend, bound to the test embedder (`sqlcipher`: the SQLite store
    encrypted at rest; `postgres-sealed`: PostgreSQL with a master key, payloads sealed per user)."""
    if request.param in ("sqlite", "sqlcipher"):
        backend: Store = (
            SQLiteStore(tmp_path / "memories.db")
            if request.param == "sqlite"
            else open_store(tmp_path / "memories.db", key="contract-test key")
        )
        backend.bind_embedder("hashing-64", TEST_DIMENSIONS)
        try:
            yield backend
        finally:
            backend.close()
        return
    from memstrata.storage.crypto import LocalKeyProvider, new_data_key
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import postgres_urls

    provider = LocalKeyProvider(new_data_key()) if request.param == "postgres-sealed" else None
    with postgres_urls() as (app_url, owner_url):
        backend = PostgresStore.open(app_url, owner_url=owner_url, key_provider=provider)
        backend.bind_embedder("hashing-64", TEST_DIMENSIONS)
        try:
            yield backend
        finally:
            backend.close()


@pytest.fixture
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memories.db'}"
