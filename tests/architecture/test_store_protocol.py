"""The `Store` Protocol names every store capability the layers rely on: the erasure fence reads
`erasure_generation`, the user lock holds `user_lock`, `memstrata compact` calls `compact`; no caller
looks one up with getattr, and every backend satisfies the whole Protocol for mypy."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.storage.base import Store

from .test_api_protocol import mypy

CAPABILITIES = ("erasure_generation", "user_lock", "compact")

CONFORMING = """
from memstrata.storage.base import Store
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.sqlite import SQLiteStore

def sqlite(store: SQLiteStore) -> Store:
    return store

def postgres(store: PostgresStore) -> Store:
    return store
"""


@pytest.mark.parametrize("name", CAPABILITIES)
def test_the_protocol_declares_the_capability(name: str) -> None:
    assert callable(getattr(Store, name, None))


def test_an_object_without_the_fence_capabilities_is_not_a_store() -> None:
    class ItemsOnly:
        url = "nowhere"

        def get_item(self, user_id: str, namespace: str, key: str) -> None:
            return None

    assert not isinstance(ItemsOnly(), Store)


@pytest.mark.slow
def test_every_backend_satisfies_the_whole_protocol(tmp_path: Path) -> None:
    result = mypy(tmp_path, CONFORMING)
    assert result.returncode == 0, result.stdout + result.stderr
