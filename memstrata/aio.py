"""`AsyncMemory`: the async flavour of `Memory`, generated from it — no logic of its own.

Each public `Memory` method becomes a coroutine that runs the one synchronous implementation in a
worker thread (`anyio.to_thread.run_sync`). `Memory` is thread-safe, so concurrent awaits are fine.
See docs/architecture.md ("Synchronous core, thin async facade") for why the core is synchronous.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any

import anyio.to_thread

from .memory import Memory

_SKIP = frozenset({"close", "from_settings"})


def _public_methods() -> list[str]:
    return sorted(
        name for name, member in inspect.getmembers(Memory, inspect.isfunction)
        if not name.startswith("_") and name not in _SKIP
    )  # fmt: skip


def _make_async(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    sync_method = getattr(Memory, name)

    @functools.wraps(sync_method)
    async def method(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        bound = functools.partial(getattr(self.sync, name), *args, **kwargs)
        return await anyio.to_thread.run_sync(bound)

    return method


class AsyncMemory:
    """`await memory.add(...)`, `await memory.search(...)`: every `Memory` method, awaitable."""

    def __init__(self, memory: Memory | None = None, **kwargs: Any) -> None:
        self.sync = memory if memory is not None else Memory(**kwargs)

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        # Reached only for names not generated below: give a precise error instead of a bare AttributeError.
        raise AttributeError(f"AsyncMemory has no method {name!r} (Memory has no public method of that name)")


ASYNC_METHODS = tuple(_public_methods())
for _name in ASYNC_METHODS:
    setattr(AsyncMemory, _name, _make_async(_name))
