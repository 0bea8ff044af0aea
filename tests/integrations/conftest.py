"""Fixtures for the framework adapters: LangGraph stores side by side, in sync and async mode.

`StoreApi` runs one test body against any `BaseStore`: in sync mode it calls `put/get/...`, in
async mode `aput/aget/...` on one event loop (a blocking portal) that lives for the whole test.
The reference stores are LangGraph's own: `InMemoryStore` (vector search, no TTL) and
`SqliteStore` / `AsyncSqliteStore` (TTL; no vector search here, since this Python cannot load
SQLite extensions). They embed with the same hashing embedder as memstrata, so rankings agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.integrations.langgraph import AsyncMemstrataStore, MemstrataStore

DIMENSIONS = 64


class HashingEmbeddings(Embeddings):
    """memstrata's test embedder behind LangChain's `Embeddings` interface (for reference stores)."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(DIMENSIONS)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.inner.embed_query(text)]


@dataclass(frozen=True)
class Kind:
    """A store under test and what LangGraph lets it support."""

    name: str
    vectors: bool
    ttl: bool
    keeps_created_at: bool
    """PostgresStore and memstrata keep `created_at` on overwrite; InMemoryStore and SqliteStore reset it."""


KINDS = {
    "memstrata": Kind("memstrata", vectors=True, ttl=True, keeps_created_at=True),
    "memstrata-postgres": Kind("memstrata-postgres", vectors=True, ttl=True, keeps_created_at=True),
    # Opened as LangGraph's stores are: from_conn_string with index={"embed", "dims", "text_fields"}, setup().
    "memstrata-conn": Kind("memstrata-conn", vectors=True, ttl=True, keeps_created_at=True),
    "langgraph-inmemory": Kind("langgraph-inmemory", vectors=True, ttl=False, keeps_created_at=False),
    "langgraph-sqlite": Kind("langgraph-sqlite", vectors=False, ttl=True, keeps_created_at=False),
}


def store_params(*, vectors: bool = False, ttl: bool | None = None) -> list[Any]:
    """pytest params (kind × sync/async) for the stores that have the named capabilities."""
    params = []
    for kind in KINDS.values():
        if (vectors and not kind.vectors) or (ttl is not None and kind.ttl != ttl):
            continue
        marks = [pytest.mark.postgres] if kind.name.endswith("postgres") else []
        for mode in ("sync", "async"):
            params.append(pytest.param((kind.name, mode), id=f"{kind.name}-{mode}", marks=marks))
    return params


class StoreApi:
    """One store, called through its sync or its async methods."""

    def __init__(self, store: BaseStore, kind: Kind, portal: BlockingPortal | None) -> None:
        self.store = store
        self.kind = kind
        self.portal = portal

    @property
    def mode(self) -> str:
        return "sync" if self.portal is None else "async"

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.portal is None:
            return getattr(self.store, name)(*args, **kwargs)
        return self.portal.call(partial(getattr(self.store, "a" + name), *args, **kwargs))

    def put(self, *args: Any, **kwargs: Any) -> None:
        self._call("put", *args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("get", *args, **kwargs)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("search", *args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> None:
        self._call("delete", *args, **kwargs)

    def list_namespaces(self, **kwargs: Any) -> Any:
        return self._call("list_namespaces", **kwargs)

    def batch(self, ops: list[Any]) -> Any:
        return self._call("batch", ops)

    def sweep_ttl(self) -> int:
        if self.portal is None:
            return int(self.store.sweep_ttl())  # type: ignore[attr-defined]
        # memstrata has asweep_ttl; an AsyncSqliteStore's sweep_ttl is itself a coroutine function
        sweep = getattr(self.store, "asweep_ttl", None) or self.store.sweep_ttl  # type: ignore[attr-defined]
        return int(self.portal.call(sweep))


@pytest.fixture
def make_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., StoreApi]]:
    """`make_store((kind, mode), fields=[...], ttl={...})` → a fresh `StoreApi`; closed after the test."""
    stack = ExitStack()

    def make(param: tuple[str, str], *, fields: list[str] | None = None, ttl: dict[str, Any] | None = None) -> StoreApi:
        name, mode = param
        kind = KINDS[name]
        portal = stack.enter_context(start_blocking_portal()) if mode == "async" else None
        store = _open(kind, tmp_path, stack, portal, fields=fields or ["text"], ttl=ttl)
        return StoreApi(store, kind, portal)

    with stack:
        yield make


def _open(
    kind: Kind,
    tmp_path: Path,
    stack: ExitStack,
    portal: BlockingPortal | None,
    *,
    fields: list[str],
    ttl: dict[str, Any] | None,
) -> BaseStore:
    index = {"dims": DIMENSIONS, "fields": fields}
    if kind.name == "langgraph-inmemory":
        return InMemoryStore(index={**index, "embed": HashingEmbeddings()})  # type: ignore[typeddict-item]
    if kind.name == "langgraph-sqlite":
        path = tmp_path / "langgraph.db"
        if portal is None:
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            stack.callback(conn.close)
            store = SqliteStore(conn, ttl=ttl)  # type: ignore[arg-type]
            store.setup()
            return store

        async def open_async() -> AsyncSqliteStore:
            conn = await aiosqlite.connect(path, isolation_level=None)
            store = AsyncSqliteStore(conn, ttl=ttl)  # type: ignore[arg-type]
            await store.setup()
            return store

        async_store = portal.call(open_async)
        stack.callback(portal.call, async_store.conn.close)
        return async_store
    if kind.name == "memstrata-conn":
        return _from_conn_string(tmp_path / "conn.db", stack, portal, fields=fields, ttl=ttl)
    memory = _memory(kind, tmp_path, stack)
    return MemstrataStore(memory, index=index, ttl=ttl)  # type: ignore[arg-type]


def _from_conn_string(
    path: Path, stack: ExitStack, portal: BlockingPortal | None, *, fields: list[str], ttl: dict[str, Any] | None
) -> BaseStore:
    index = {"embed": HashingEmbeddings(), "dims": DIMENSIONS, "text_fields": fields}
    if portal is None:
        store = stack.enter_context(MemstrataStore.from_conn_string(str(path), index=index, ttl=ttl))  # type: ignore[arg-type]
        store.setup()
        return store
    opened = AsyncMemstrataStore.from_conn_string(str(path), index=index, ttl=ttl)  # type: ignore[arg-type]
    async_store = portal.call(opened.__aenter__)
    stack.callback(portal.call, opened.__aexit__, None, None, None)
    portal.call(async_store.setup)
    return async_store


def _memory(kind: Kind, tmp_path: Path, stack: ExitStack) -> Memory:
    if kind.name == "memstrata":
        memory = Memory(store=f"sqlite:///{tmp_path / 'memstrata.db'}", embedder=HashingEmbedder(DIMENSIONS))
    else:
        from memstrata.storage.postgres import PostgresStore
        from tests.support.pg import postgres_urls

        app_url, owner_url = stack.enter_context(postgres_urls())
        backend = PostgresStore.open(app_url, owner_url=owner_url)
        memory = Memory(store=backend, embedder=HashingEmbedder(DIMENSIONS))
    stack.callback(memory.close)
    return memory
