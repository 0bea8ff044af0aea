"""AsyncMemory mirrors Memory through one implementation."""

from __future__ import annotations

import inspect
from pathlib import Path

import anyio
import pytest

from memstrata import Memory
from memstrata.aio import ASYNC_METHODS, AsyncMemory
from memstrata.embedders.hashing import HashingEmbedder


def test_every_public_memory_method_has_an_async_twin() -> None:
    public = {n for n, m in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")}
    assert public - {"close", "from_settings"} == set(ASYNC_METHODS)
    for name in ASYNC_METHODS:
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name


def test_async_add_search_and_concurrency(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncMemory(store=f"sqlite:///{tmp_path / 'a.db'}", embedder=HashingEmbedder(64)) as memory:
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(lambda i=i: memory.add(f"note number {i} about tea", scope="alice"))
            hits = await memory.search("note number 7 tea", scope="alice", k=3)
            assert hits[0].memory.content == "note number 7 about tea"
            assert len(await memory.list(scope="alice", limit=100)) == 20
            with pytest.raises(AttributeError, match="no method 'nope'"):
                memory.nope  # noqa: B018

    anyio.run(main)
