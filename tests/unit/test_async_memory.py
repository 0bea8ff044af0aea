"""AsyncMemory and AsyncMemoryClient mirror their synchronous classes through one implementation."""

from __future__ import annotations

import inspect
from pathlib import Path

import anyio

from memstrata import Memory, MemoryClient
from memstrata.aio import AsyncMemory, AsyncMemoryClient
from memstrata.embedders.hashing import HashingEmbedder


def public_methods(cls: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def test_every_public_method_has_an_async_twin_with_the_same_parameters() -> None:
    for sync_cls, async_cls in [(Memory, AsyncMemory), (MemoryClient, AsyncMemoryClient)]:
        wrapped = public_methods(sync_cls) - {"close", "from_settings"}
        assert wrapped <= public_methods(async_cls)
        for name in wrapped:
            method = getattr(async_cls, name)
            assert inspect.iscoroutinefunction(method), name
            sync_parameters = inspect.signature(getattr(sync_cls, name)).parameters
            assert list(inspect.signature(method).parameters) == list(sync_parameters), name
        assert inspect.iscoroutinefunction(async_cls.close) and inspect.iscoroutinefunction(async_cls.aclose)


def test_async_add_search_concurrency_and_close(tmp_path: Path) -> None:
    async def main() -> None:
        memory = AsyncMemory(store=f"sqlite:///{tmp_path / 'a.db'}", embedder=HashingEmbedder(64))
        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(lambda i=i: memory.add(f"note number {i} about tea", scope="alice"))
        hits = await memory.search("note number 7 tea", scope="alice", k=3)
        assert hits[0].memory.content == "note number 7 about tea"
        assert len(await memory.list(scope="alice", limit=100)) == 20
        await memory.close()

    anyio.run(main)
