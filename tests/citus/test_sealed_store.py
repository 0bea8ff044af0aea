"""Crypto-shredding on Citus: the sealed store's keys, writes, searches and erasure on a distributed schema
(`user_keys` is distributed by user id, colocated with `memories`)."""

from __future__ import annotations

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.filters import SearchFilter
from memstrata.storage.crypto import LocalKeyProvider, new_data_key
from memstrata.storage.postgres import PostgresStore
from tests.support.citus import CitusSchema, connect_coordinator

pytestmark = pytest.mark.citus


def test_sealed_store_searches_and_shreds_on_citus(citus: CitusSchema) -> None:
    provider = LocalKeyProvider(new_data_key())
    with PostgresStore.open(citus.app_url, owner_url=citus.owner_url, key_provider=provider) as store:
        memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
        for user in ("alice", "bob"):
            memory.add(f"{user} keeps bees in Qzvbeehive", scope=user, metadata={"topic": "bees"})
        [hit] = memory.search("where are the Qzvbeehive bees?", scope="alice", strategy="keyword")
        assert hit.memory.content == "alice keeps bees in Qzvbeehive"
        assert [r.content for r in memory.list(scope="bob", filters=SearchFilter(metadata={"topic": "bees"}))] == [
            "bob keeps bees in Qzvbeehive"
        ]
        with connect_coordinator(options=f"-csearch_path={citus.schema},public") as admin:
            contents = [r[0] for r in admin.execute("SELECT content FROM memories").fetchall()]
            assert len(contents) == 2 and not any("Qzvbeehive" in c for c in contents)
            memory.erase_user(scope="alice")
            keys = [r[0] for r in admin.execute("SELECT user_id FROM user_keys").fetchall()]
        assert sorted(keys) == ["_system", "bob"]  # the erasure receipt is kept (sealed) under the system user
        assert memory.list(scope="alice") == []
        assert [r.content for r in memory.list(scope="bob")] == ["bob keeps bees in Qzvbeehive"]
