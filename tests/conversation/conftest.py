"""Fixtures of the conversation-layer tests: clocks, Memory objects, real Redis with a key prefix per test.

Redis tests use MEMSTRATA_TEST_REDIS_URL (default redis://127.0.0.1:6379/15), a random key prefix per
test, and delete their keys with SCAN + DEL afterwards (never FLUSHALL). Unreachable Redis skips
locally and fails under CI=true.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata.buffer import Buffer, InProcessBuffer
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.settings import Settings
from tests.conftest import service_missing
from tests.support.clock import Clock

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


def redis_url() -> str:
    return os.environ.get("MEMSTRATA_TEST_REDIS_URL", DEFAULT_REDIS_URL)


def redis_client() -> Any:
    """A client of the test Redis, or skip (fail under CI) when it does not answer."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(redis_url(), decode_responses=True, socket_connect_timeout=1, socket_timeout=2)
    try:
        client.ping()
    except redis.exceptions.RedisError as exc:
        client.close()
        service_missing(f"Redis at {redis_url()} is not reachable: {exc}")
    return client


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A fresh key prefix; every key under it is deleted after the test (SCAN + DEL)."""
    client = redis_client()
    prefix = f"memstrata-test-{uuid.uuid4().hex[:10]}:"
    try:
        yield prefix
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture
def redis_spec(redis_prefix: str) -> str:
    separator = "&" if "?" in redis_url() else "?"
    return f"{redis_url()}{separator}prefix={redis_prefix}"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def buffer(request: pytest.FixtureRequest) -> Iterator[Buffer]:
    """Each buffer contract test runs on the in-process buffer and on real Redis."""
    if request.param == "memory":
        yield InProcessBuffer(ttl_seconds=3600)
        return
    from memstrata.buffer.redis import RedisBuffer

    prefix = request.getfixturevalue("redis_prefix")
    backend = RedisBuffer(redis_url(), ttl_seconds=3600, prefix=prefix)
    try:
        yield backend
    finally:
        backend.close()


MemoryFactory = Callable[..., Any]


@pytest.fixture
def make_memory(tmp_path: Path, clock: Clock) -> Iterator[MemoryFactory]:
    """Build Memory objects on one SQLite file (several = several app processes); all closed at the end."""
    made: list[Any] = []

    def make(*, buffer: Any = "memory://", llm: Any = None, embedder: Any = None, **settings: Any) -> Any:
        memory = Memory(
            store=f"sqlite:///{tmp_path / 'memories.db'}",
            embedder=embedder or HashingEmbedder(64),
            clock=clock,
            settings=Settings(**{"llm": None, "buffer": "memory://", **settings}),
            buffer=buffer,
            llm=llm,
        )
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


@pytest.fixture
def memory(make_memory: MemoryFactory) -> Any:
    return make_memory()
