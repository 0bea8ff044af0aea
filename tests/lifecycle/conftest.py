"""Fixtures for lifecycle and privacy tests: a settable clock, memories on every backend, a Redis buffer.

Postgres comes from `tests/support/pg.py` (a throwaway database with an owner and a non-superuser app
role); Redis from MEMSTRATA_TEST_REDIS_URL (default redis://127.0.0.1:6379/15) under a random key
prefix. Either service missing: skip locally, fail under CI=true.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.lifecycle import LifecyclePolicy
from memstrata.storage.base import Store
from memstrata.storage.sqlite import SQLiteStore
from tests.conftest import service_missing
from tests.support.clock import Clock

REDIS_ENV = "MEMSTRATA_TEST_REDIS_URL"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)

LifecycleMemory = Memory
_REOPENED: list[Memory] = []


def use_policy(memory: Any, *, llm: Any = None, **fields: Any) -> Memory:
    """A second `Memory` on the same SQLite file, embedder and clock, with these policy fields (and LLM).

    Policy and LLM are constructor arguments of `Memory`; tests that need other ones open another
    `Memory` over the same data. It is closed when the test ends.
    """
    reopened = Memory(
        store=f"sqlite:///{memory.store.path}",
        embedder=memory.embedder,
        clock=memory.clock,
        track_access=False,
        policy=LifecyclePolicy(**fields),
        llm=llm,
    )
    _REOPENED.append(reopened)
    return reopened


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    while _REOPENED:
        _REOPENED.pop().close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_memory(tmp_path: Path, clock: Clock) -> Iterator[Callable[..., Any]]:
    """`make_memory(name="m", **kwargs)`: a SQLite-backed memory with the test embedder and clock."""
    opened: list[Any] = []

    def make(name: str = "m", **kwargs: Any) -> Any:
        kwargs.setdefault("embedder", HashingEmbedder(64))
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("track_access", False)
        memory = LifecycleMemory(store=f"sqlite:///{tmp_path / f'{name}.db'}", **kwargs)
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


@pytest.fixture
def memory(make_memory: Callable[..., Any]) -> Any:
    return make_memory()


@dataclass
class Backend:
    """A store of one backend type and how to look at its raw storage."""

    name: str
    store: Store
    app_url: str | None = None
    owner_url: str | None = None
    path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def open_backend(name: str, tmp_path: Path, stack: list[Any]) -> Backend:
    if name == "sqlite":
        path = tmp_path / f"{secrets.token_hex(3)}.db"
        return Backend("sqlite", SQLiteStore(path), path=path)
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import postgres_urls

    context = postgres_urls()
    app_url, owner_url = context.__enter__()
    stack.append(context)
    return Backend("postgres", PostgresStore.open(app_url, owner_url=owner_url), app_url, owner_url)


@pytest.fixture
def backends(tmp_path: Path) -> Iterator[Callable[[str], Backend]]:
    """`backends("sqlite" | "postgres")` opens a fresh, empty store; all are closed and dropped after."""
    contexts: list[Any] = []
    opened: list[Backend] = []

    def make(name: str) -> Backend:
        backend = open_backend(name, tmp_path, contexts)
        opened.append(backend)
        return backend

    yield make
    for backend in opened:
        backend.store.close()
    for context in reversed(contexts):
        context.__exit__(None, None, None)


def redis_url() -> str:
    return os.environ.get(REDIS_ENV) or DEFAULT_REDIS_URL


@dataclass
class RedisFixture:
    buffer: Any
    client: Any
    prefix: str

    def dump(self) -> dict[bytes, Any]:
        """Every key under the prefix with its value (lists, strings, hashes, sets)."""
        found: dict[bytes, Any] = {}
        for key in self.client.scan_iter(match=f"{self.prefix}*"):
            kind = self.client.type(key)
            if kind == b"list":
                found[key] = self.client.lrange(key, 0, -1)
            elif kind == b"hash":
                found[key] = self.client.hgetall(key)
            elif kind == b"set":
                found[key] = sorted(self.client.smembers(key))
            elif kind == b"zset":
                found[key] = self.client.zrange(key, 0, -1)
            else:
                found[key] = self.client.get(key)
        return found


@pytest.fixture
def redis_buffer() -> Iterator[RedisFixture]:
    """A `RedisBuffer` under a random key prefix, a raw client, and the prefix; keys are deleted after."""
    try:
        import redis
    except ImportError:
        service_missing("the redis package is not installed (pip install 'memstrata-ai[redis]')")
        raise
    from memstrata.buffer.redis import RedisBuffer

    prefix = f"memstrata-test-{secrets.token_hex(4)}:"
    client = redis.Redis.from_url(redis_url(), socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        service_missing(f"Redis is not reachable at {redis_url()} (set {REDIS_ENV}): {exc}")
    buffer = RedisBuffer(redis_url(), prefix=prefix)
    try:
        yield RedisFixture(buffer, client, prefix)
    finally:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        buffer.close()
        client.close()
