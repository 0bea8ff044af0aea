"""`AsyncMemory(...)` and `AsyncMemoryClient(...)` take the arguments of `Memory(...)` and
`MemoryClient(...)` (a store URL, a server URL and key), or the synchronous object to wrap; a
misplaced argument is refused when the object is built, not on first use."""

from __future__ import annotations

import inspect
from pathlib import Path

import anyio
import pytest

from memstrata import Memory, MemoryClient
from memstrata.aio import AsyncMemory, AsyncMemoryClient
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import InvalidInput
from memstrata.storage import Store
from tests.server.conftest import Server


@pytest.mark.parametrize(
    ("sync_cls", "async_cls", "wrapped"), [(Memory, AsyncMemory, "memory"), (MemoryClient, AsyncMemoryClient, "client")]
)
def test_constructors_take_the_sync_constructors_parameters(sync_cls: type, async_cls: type, wrapped: str) -> None:
    sync = dict(inspect.signature(sync_cls.__init__).parameters)
    mine = dict(inspect.signature(async_cls.__init__).parameters)
    assert mine.pop(wrapped).default is None
    assert [(p.name, p.kind, p.default) for p in mine.values()] == [(p.name, p.kind, p.default) for p in sync.values()]


def test_async_client_from_a_url_and_key_talks_to_a_live_server(server: Server) -> None:
    async def main() -> None:
        async with AsyncMemoryClient(server.url, api_key=server.keys.alice) as client:
            added = await client.add("Alice takes her tea without sugar", scope="alice")
            hits = await client.search("tea sugar", scope="alice", k=3)
            assert added.id in [h.memory.id for h in hits]
            assert (await client.get(added.id, scope="alice")).content == "Alice takes her tea without sugar"

    anyio.run(main)


def test_async_client_wraps_a_client_passed_as_client(server: Server) -> None:
    sync = MemoryClient(server.url, api_key=server.keys.bob)

    async def main() -> None:
        client = AsyncMemoryClient(client=sync)
        assert client.sync is sync
        record = await client.add("Bob keeps bees", scope="bob")
        assert [m.id for m in await client.list(scope="bob", limit=10)] == [record.id]
        await client.aclose()

    anyio.run(main)


def test_async_client_refuses_a_misplaced_client(server: Server) -> None:
    sync = MemoryClient(server.url, api_key=server.keys.bob)
    with pytest.raises(InvalidInput, match=r"goes in client=\.\.\., not positionally"):
        AsyncMemoryClient(sync)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="not both: base_url, api_key"):
        AsyncMemoryClient(server.url, api_key=server.keys.bob, client=sync)
    with pytest.raises(InvalidInput, match=r"client is a MemoryClient to wrap, not a str .*AsyncMemoryClient\('http"):
        AsyncMemoryClient(client=server.url)  # type: ignore[arg-type]
    sync.close()


def test_async_memory_opens_a_store_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'async.db'}"

    async def main() -> None:
        async with AsyncMemory(store=url, embedder="hashing:64") as memory:
            await memory.add("Alice lives in Porto", scope="alice")
            assert [h.memory.content for h in await memory.search("Porto", scope="alice")] == ["Alice lives in Porto"]

    anyio.run(main)
    with Memory(store=url, embedder="hashing:64") as memory:  # written to that file
        assert [m.content for m in memory.list(scope="alice")] == ["Alice lives in Porto"]


def test_async_memory_on_every_store(store: Store) -> None:
    async def main() -> None:
        memory = AsyncMemory(store=store, embedder=HashingEmbedder(64))
        for text in ("Alice plays the cello", "Alice runs on Sundays"):
            await memory.add(text, scope="alice")
        hits = await memory.search("cello", scope="alice", k=1)
        assert hits[0].memory.content == "Alice plays the cello"
        assert await memory.list(scope="bob") == []
        await memory.aclose()

    anyio.run(main)


def test_async_memory_refuses_a_store_url_as_the_memory_to_wrap(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(InvalidInput, match=r"memory is a Memory to wrap, not a str .*AsyncMemory\(store="):
        AsyncMemory(f"sqlite:///{path}")  # type: ignore[arg-type]
    assert not path.exists()
    with Memory(store=f"sqlite:///{tmp_path / 'a.db'}", embedder=HashingEmbedder(64)) as sync:
        with pytest.raises(InvalidInput, match="not both: store"):
            AsyncMemory(sync, store=f"sqlite:///{path}")
        assert AsyncMemory(sync).sync is sync
