"""LangGraph long-term memory on memstrata: `MemstrataStore`, a `langgraph.store.base.BaseStore`.

    from langgraph.graph import StateGraph
    from memstrata import Memory
    from memstrata.integrations.langgraph import MemstrataStore

    store = MemstrataStore(Memory(store="sqlite:///memories.db"), index={"fields": ["text"]})
    graph = builder.compile(store=store)

Namespaces `("users", user_id, ...)` belong to that memstrata user; every other namespace to a
reserved shared owner (`langgraph_items.py` has the whole mapping, docs/langgraph.md the why).
Each operation of a batch reads the state before the batch's writes, and puts are applied last,
the last put of a (namespace, key) winning — as in LangGraph's own stores.

Needs the `langgraph` extra: `pip install 'memstrata-ai[langgraph]'`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        get_text_at_path,
        tokenize_path,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "memstrata.integrations.langgraph needs LangGraph: pip install 'memstrata-ai[langgraph]'", name=exc.name
    ) from exc

import anyio.to_thread
import numpy as np
from langchain_core.embeddings import Embeddings

from ..aio import AsyncMemory
from ..embedders.base import Embedder
from ..errors import ConfigurationError, InvalidInput
from ..models import (
    RESERVED_PREFIX,
    EventType,
    HistoryEvent,
    MemoryKind,
    MemoryRecord,
    Scope,
    new_event,
    new_id,
    new_record,
)
from ..storage.base import MemoryFilter, ScoredRow, Store
from .langgraph_embed import LangChainEmbedder, embedder_from_index, embeddings_of, same_embeddings
from .langgraph_items import (
    DEFAULT_USER_LABELS,
    ITEM_NAMESPACE,
    SHARED_OWNER,
    StoredItem,
    check_value,
    document_key,
    expiry,
    owner_of,
    owners_for_prefix,
    vector_id,
    vector_metadata,
)
from .langgraph_query import (
    check_filter,
    check_page,
    has_prefix,
    list_namespaces,
    live,
    matches_filter,
    newest_first,
    rank,
)

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger(__name__)

MAX_ITEMS_PER_OWNER = 1_000_000
MAX_USERS_SCANNED = 100_000
"""Namespace prefixes that name no user (e.g. `()` or `("users",)`) scan this many users at most."""

Paths = list[tuple[str, Any]]


class MemstrataStore(BaseStore):
    """A LangGraph `BaseStore` whose items are memstrata data (see the module docstring).

    `index`: which fields of a value to embed, with the Memory's embedder. The default embeds the
    whole value (`["$"]`, LangGraph's default); `{"fields": ["text"]}` (or `"text_fields"`) embeds one
    field; `False` turns vector search off (a query is then ignored, as in a LangGraph store without an
    index). `embed` (a LangChain `Embeddings`, a function or a provider string) is taken by
    `from_conn_string`, which builds the Memory around it; given here it must be the Memory's own, and
    `dims`, when given, must match it. `ttl`: LangGraph's `TTLConfig` (minutes; reads refresh a TTL unless
    `refresh_on_read=False`). Expired items are never returned; `sweep_ttl()` deletes them.
    `user_labels`: first labels that mark a per-user namespace `(label, user_id, ...)`.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        index: IndexConfig | Literal[False] | None = None,
        ttl: TTLConfig | None = None,
        user_labels: Sequence[str] = DEFAULT_USER_LABELS,
    ) -> None:
        self.memory: Memory = memory.sync if isinstance(memory, AsyncMemory) else memory
        self.store: Store = self.memory.store
        self.index_config: IndexConfig | None = _check_index(index, self.memory.embedder)
        self.embeddings: Embeddings | None = None if self.index_config is None else embeddings_of(self.memory.embedder)
        """The LangChain embeddings the index embeds with (None without an index), as on LangGraph's stores."""
        self._fields: Paths = [
            (path, path if path == "$" else tokenize_path(path))
            for path in ((self.index_config or {}).get("fields") or ["$"])
        ]
        self.ttl_config = ttl
        if isinstance(user_labels, str) or not user_labels:
            raise InvalidInput("user_labels must be a non-empty sequence of namespace labels")
        self.user_labels = tuple(user_labels)
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    # -- opening, as PostgresStore / SqliteStore ---------------------------------------------------
    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> Iterator[MemstrataStore]:
        """A store over a memstrata store URL or path (`sqlite:///memories.db`, `memories.db`, `:memory:`,
        `postgresql://...`), closed on exit. With `index={"embed": ..., "dims": ...}` the vectors come
        from those embeddings, else from the configured memstrata embedder (`MEMSTRATA_EMBEDDER`)."""
        memory = _memory_for(conn_string, index)
        store = None
        try:
            store = cls(memory, index=index, ttl=ttl)
            yield store
        finally:
            if store is not None:
                store._stop_sweeper()  # a sweep must not run on a closed store
            memory.close()

    def setup(self) -> None:
        """Create or migrate the schema. A memstrata store migrates when it is opened, so this only checks
        that it answers (a `BackendError` if not); call it as with LangGraph's stores."""
        self.store.user_ids(limit=1)

    # -- BaseStore ----------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            _check_op(op)
        now = self.memory.clock()
        reader = _Reader(self.store, self.user_labels)
        queries = self._embed_queries(ops)
        results: list[Result] = [None] * len(ops)
        refresh: dict[tuple[str, str], StoredItem] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[i] = self._get(op, now, refresh)
            elif isinstance(op, SearchOp):
                results[i] = self._search(op, now, reader, queries, refresh)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op, now, reader)
        self._refresh(refresh, now)
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
        if puts:
            self._apply_puts(list(puts.values()), now)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await anyio.to_thread.run_sync(partial(self.batch, list(ops)))

    # -- reads --------------------------------------------------------------------------------
    def _get(self, op: GetOp, now: datetime, refresh: dict[tuple[str, str], StoredItem]) -> Item | None:
        owner = owner_of(op.namespace, self.user_labels)
        stored = _load(self.store, owner, op.namespace, op.key)
        if stored is None or stored.expired(now):
            return None
        if op.refresh_ttl and stored.ttl_minutes is not None:
            refresh[(owner, document_key(stored.namespace, stored.key))] = stored
        return Item(
            value=stored.value,
            key=stored.key,
            namespace=stored.namespace,
            created_at=stored.created_at,
            updated_at=stored.updated_at,
        )

    def _search(
        self,
        op: SearchOp,
        now: datetime,
        reader: _Reader,
        queries: dict[str, np.ndarray],
        refresh: dict[tuple[str, str], StoredItem],
    ) -> list[SearchItem]:
        check_page(op.limit, op.offset)
        by_owner = {
            owner: live(
                (
                    i
                    for i in reader.items(owner)
                    if has_prefix(i.namespace, op.namespace_prefix) and matches_filter(i.value, op.filter)
                ),
                now,
            )
            for owner in reader.owners(op.namespace_prefix)
        }
        candidates = [item for items in by_owner.values() for item in items]
        if op.query and op.query in queries:
            similarities: dict[str, float] = {}
            for owner, items in by_owner.items():
                similarities |= self._similarities(owner, items, queries[op.query], op.offset + op.limit)
            page = rank(candidates, similarities, limit=op.limit, offset=op.offset)
        else:
            page = [(item, None) for item in newest_first(candidates)[op.offset : op.offset + op.limit]]
        owner_of_item = {id(item): owner for owner, items in by_owner.items() for item in items}
        if op.refresh_ttl:
            for item, _ in page:
                if item.ttl_minutes is not None:
                    refresh[(owner_of_item[id(item)], document_key(item.namespace, item.key))] = item
        return [
            SearchItem(
                namespace=item.namespace,
                key=item.key,
                value=item.value,
                created_at=item.created_at,
                updated_at=item.updated_at,
                score=score,
            )
            for item, score in page
        ]

    def _similarities(self, owner: str, items: Sequence[StoredItem], query: np.ndarray, need: int) -> dict[str, float]:
        """Scores of the best vectors of `items`: enough to rank the `need` best items exactly, ties
        included (vectors come best first, so an item's first vector carries its max-pooled score).
        Items left out rank below every item returned."""
        owned = {vid: id(item) for item in items for vid in item.vector_ids}
        if not owned or need == 0:
            return {}
        where = MemoryFilter(ids=tuple(owned), include_expired=True)
        limit = min(len(owned), max(2 * need, 16))
        while True:
            rows = self.store.vector_search(owner, query, where, limit=limit)
            if len(rows) < limit or limit == len(owned) or _ranks_settled(rows, owned, need):
                return {row.record.id: row.score for row in rows}
            limit = min(len(owned), limit * 4)

    def _list_namespaces(self, op: ListNamespacesOp, now: datetime, reader: _Reader) -> list[tuple[str, ...]]:
        check_page(op.limit, op.offset)
        if op.max_depth is not None and (isinstance(op.max_depth, bool) or op.max_depth < 1):
            raise InvalidInput(f"max_depth must be a positive integer, got {op.max_depth!r}")
        conditions = [(c.match_type, tuple(c.path)) for c in op.match_conditions or ()]
        prefixes = [path for kind, path in conditions if kind == "prefix"]
        owners = reader.owners(prefixes[0] if prefixes else ())
        namespaces = (item.namespace for owner in owners for item in live(reader.items(owner), now))
        return list_namespaces(namespaces, conditions, max_depth=op.max_depth, limit=op.limit, offset=op.offset)

    def _embed_queries(self, ops: Sequence[Op]) -> dict[str, np.ndarray]:
        if self.index_config is None:
            return {}
        texts = sorted({op.query for op in ops if isinstance(op, SearchOp) and op.query})
        return {text: self.memory.embedder.embed_query(text) for text in texts}

    # -- writes -------------------------------------------------------------------------------
    def _apply_puts(self, ops: Sequence[PutOp], now: datetime) -> None:
        """Validate and plan every put first, embed every changed text in one call, then write."""
        plans = [self._plan(op, now) for op in ops]
        texts = [record.content for plan in plans for record in plan.changed]
        vectors = self.memory.embedder.embed_documents(texts) if texts else None
        start = 0
        for plan in plans:
            count = len(plan.changed)
            self._write(plan, None if vectors is None else vectors[start : start + count], now)
            start += count

    def _plan(self, op: PutOp, now: datetime) -> _Plan:
        plan = _Plan(op, owner_of(op.namespace, self.user_labels))
        plan.old = old = _load(self.store, plan.owner, op.namespace, op.key)
        if op.value is None:
            return plan
        value = check_value(op.value)
        texts = self._texts(value, op.index)
        plan.item = item = StoredItem(
            namespace=tuple(op.namespace),
            key=op.key,
            value=value,
            created_at=old.created_at if old is not None and not old.expired(now) else now,
            updated_at=now,
            expires_at=expiry(now, op.ttl),
            ttl_minutes=op.ttl,
            vector_ids=tuple(vector_id(op.namespace, op.key, path) for path, _ in texts),
        )
        existing = {r.id: r for r in self.store.get(plan.owner, list(old.vector_ids))} if old else {}
        scope = Scope.from_storage(plan.owner)
        for (path, text), memory_id in zip(texts, item.vector_ids, strict=True):
            metadata = vector_metadata(item.namespace, item.key, path)
            previous = existing.get(memory_id)
            if previous is not None and previous.content == text:  # same text: keep its vector
                plan.unchanged.append(previous.evolve(expires_at=item.expires_at, metadata=metadata, updated_at=now))
                continue
            try:
                record = new_record(
                    scope=scope,
                    content=text,
                    kind=MemoryKind.NOTE,
                    memory_id=memory_id,
                    metadata=metadata,
                    expires_at=item.expires_at,
                    created_at=previous.created_at if previous else now,
                )
            except InvalidInput as exc:
                raise InvalidInput(f"cannot index {path!r} of item {item.key!r}: {exc}") from None
            plan.changed.append(record.evolve(updated_at=now))
            plan.events.append(
                new_event(record, EventType.UPDATE, before=previous.content, after=text, at=now)
                if previous is not None
                else new_event(record, EventType.ADD, after=text, at=now)
            )
        return plan

    def _texts(self, value: dict[str, Any], index: Literal[False] | list[str] | None) -> list[tuple[str, str]]:
        """(path name, text) of every text to embed, named as LangGraph names its vectors."""
        if self.index_config is None or index is False:
            return []
        paths = self._fields if index is None else [(p, tokenize_path(p)) for p in index]
        found: dict[str, str] = {}
        for path, tokens in paths:
            texts = [t for t in get_text_at_path(value, tokens) if t.strip()]
            for i, text in enumerate(texts):
                found[f"{path}.{i}" if len(texts) > 1 else path] = text
        return list(found.items())

    def _write(self, plan: _Plan, vectors: np.ndarray | None, now: datetime) -> None:
        owner, old, item = plan.owner, plan.old, plan.item
        if plan.changed:
            self.store.save(owner, plan.changed, plan.events, vectors)
        if plan.unchanged:
            self.store.save(owner, plan.unchanged)
        if item is not None:
            key = document_key(item.namespace, item.key)
            self.store.put_item(owner, ITEM_NAMESPACE, key, item.to_value())
        elif old is not None:
            self.store.delete_item(owner, ITEM_NAMESPACE, document_key(old.namespace, old.key))
        stale = sorted(set(old.vector_ids if old else ()) - set(item.vector_ids if item else ()))
        if stale:
            self.store.delete(owner, stale, [_deleted(owner, memory_id, now) for memory_id in stale])

    def _refresh(self, read: dict[tuple[str, str], StoredItem], now: datetime) -> None:
        """Restart the TTL of the items a batch read (their document and their vectors)."""
        for (owner, _), item in read.items():
            current = _load(self.store, owner, item.namespace, item.key)
            if current is None or current.updated_at != item.updated_at:
                continue  # rewritten meanwhile: that write set its own TTL
            fresh = item.refreshed(now)
            self.store.put_item(owner, ITEM_NAMESPACE, document_key(item.namespace, item.key), fresh.to_value())
            records = self.store.get(owner, list(item.vector_ids))
            if records:
                self.store.save(owner, [r.evolve(expires_at=fresh.expires_at) for r in records])

    # -- TTL ----------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Delete every expired item and its vectors; return how many items were deleted."""
        return self._sweep()

    async def asweep_ttl(self) -> int:
        return await anyio.to_thread.run_sync(self._sweep)

    def _sweep(self) -> int:
        now = self.memory.clock()
        reader = _Reader(self.store, self.user_labels)
        deleted = 0
        for owner in reader.owners(()):
            for item in reader.items(owner):
                if item.expired(now):
                    plan = _Plan(PutOp(item.namespace, item.key, None), owner)
                    plan.old = item
                    self._write(plan, None, now)
                    deleted += 1
        return deleted

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep expired items every `sweep_interval_minutes` (default: the TTL config's, else 5) on a
        daemon thread. Returns a Future: cancelling it, or `stop_ttl_sweeper()`, stops the thread."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
        if self._sweeper is not None and self._sweeper.is_alive():
            return future
        interval = float(sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5)
        self._stop_sweeping.clear()

        def loop() -> None:
            while not self._stop_sweeping.wait(interval * 60):
                try:
                    self._sweep()
                except Exception:  # a failed sweep must not end the sweeper; the next one retries
                    log.exception("LangGraph TTL sweep failed")

        self._sweeper = threading.Thread(target=loop, daemon=True, name="memstrata-langgraph-ttl")
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True once it has stopped (or was not running)."""
        return self._stop_sweeper(timeout)

    def _stop_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None or not self._sweeper.is_alive():
            return True
        self._stop_sweeping.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped


class _Plan:
    """One put of a batch: its owner, the item before it, the item it writes (None: a delete), and
    its vector memories — changed ones (to embed, with history events) and unchanged ones."""

    def __init__(self, op: PutOp, owner: str) -> None:
        self.op = op
        self.owner = owner
        self.old: StoredItem | None = None
        self.item: StoredItem | None = None
        self.changed: list[MemoryRecord] = []
        self.events: list[HistoryEvent] = []
        self.unchanged: list[MemoryRecord] = []


class _Reader:
    """The items of each owner, read at most once per batch."""

    def __init__(self, store: Store, user_labels: Sequence[str]) -> None:
        self.store = store
        self.user_labels = user_labels
        self._items: dict[str, list[StoredItem]] = {}

    def owners(self, prefix: Sequence[str]) -> list[str]:
        reach = owners_for_prefix(prefix, self.user_labels)
        if reach.user is not None:
            return [reach.user]
        found = [SHARED_OWNER] if reach.shared else []
        if reach.all_users:
            users = self.store.user_ids(limit=MAX_USERS_SCANNED)
            found += [u for u in users if not u.startswith(RESERVED_PREFIX)]
        return found

    def items(self, owner: str) -> list[StoredItem]:
        if owner not in self._items:
            rows = self.store.list_items(owner, ITEM_NAMESPACE, limit=MAX_ITEMS_PER_OWNER)
            self._items[owner] = [StoredItem.from_value(row.value) for row in rows]
        return self._items[owner]


def _ranks_settled(rows: Sequence[ScoredRow], owned: dict[str, int], need: int) -> bool:
    """Whether the best `need` items are known: that many items appear, and the weakest vector
    fetched scores below the `need`-th item (so nothing unfetched can tie or beat it)."""
    best: dict[int, float] = {}
    for row in rows:
        best.setdefault(owned[row.record.id], row.score)
    return len(best) >= need and rows[-1].score < list(best.values())[need - 1]


def _load(store: Store, owner: str, namespace: Sequence[str], key: str) -> StoredItem | None:
    found = store.get_item(owner, ITEM_NAMESPACE, document_key(namespace, key))
    return None if found is None else StoredItem.from_value(found.value)


def _deleted(owner: str, memory_id: str, now: datetime) -> HistoryEvent:
    """A content-free DELETE event (the store scrubs the memory's text from its history)."""
    return HistoryEvent(id=new_id(), memory_id=memory_id, user_id=owner, event=EventType.DELETE, at=now)


def _check_index(index: IndexConfig | Literal[False] | None, embedder: Embedder) -> IndexConfig | None:
    """LangGraph's index config against the Memory's embedder: `embed` must be that embedder's
    embeddings (see `from_conn_string`), `dims` its dimensions; `text_fields` is `fields`' other name
    (LangGraph's SQLite store); only cosine distance (memstrata's vectors are unit length)."""
    if index is False:
        return None
    config: dict[str, Any] = dict(index or {})
    if config.get("embed") is not None and not same_embeddings(embedder, config["embed"]):
        raise ConfigurationError(
            "MemstrataStore embeds with the Memory's embedder (its store is bound to it): open it with "
            "MemstrataStore.from_conn_string(url, index={'embed': ..., 'dims': ...}) or pass "
            "Memory(embedder=LangChainEmbedder(embeddings, dims))"
        )
    dims = config.get("dims")
    if dims is not None and dims != embedder.dimensions:
        raise ConfigurationError(f"index dims={dims} but the Memory's embedder has {embedder.dimensions} dimensions")
    if config.get("distance_type", "cosine") != "cosine":
        raise ConfigurationError(f"distance_type {config['distance_type']!r} is not supported; memstrata uses cosine")
    fields, text_fields = config.get("fields"), config.get("text_fields")
    if text_fields is not None and fields is not None and list(text_fields) != list(fields):
        raise ConfigurationError("give the fields to embed as 'fields' or 'text_fields', not both")
    fields = [fields] if isinstance(fields := fields or text_fields, str) else fields
    if fields is not None and not all(isinstance(f, str) and f for f in fields):
        raise InvalidInput("index fields must be a list of JSON paths such as ['text'] or ['$']")
    config.update(dims=embedder.dimensions, fields=fields)
    return IndexConfig(**{k: v for k, v in config.items() if k != "distance_type"})  # type: ignore[typeddict-item]


def _check_op(op: Op) -> None:
    """Namespace and filter rules, checked for every op of a batch before any runs. As in LangGraph's
    stores, only the public `put` refuses namespaces rooted at "langgraph" (LangGraph's own writes go
    through `batch`)."""
    if isinstance(op, GetOp | PutOp):
        labels: Sequence[str] = op.namespace
        if isinstance(op, PutOp) and not op.namespace:
            raise InvalidNamespaceError("a put needs a non-empty namespace")
    elif isinstance(op, SearchOp):
        labels = op.namespace_prefix
        check_filter(op.filter)
    elif isinstance(op, ListNamespacesOp):
        labels = [label for c in op.match_conditions or () for label in c.path]
    else:
        raise InvalidInput(f"unknown store operation {type(op).__name__}")
    for label in labels:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"invalid namespace label {label!r}: labels are non-empty strings without '.' or NUL"
            )


class AsyncMemstrataStore(MemstrataStore):
    """`MemstrataStore` opened and set up the way `AsyncPostgresStore` / `AsyncSqliteStore` are:

        async with AsyncMemstrataStore.from_conn_string(url, index=...) as store:
            await store.setup()
            await store.aput(("users", "alice"), "k", {"text": "..."})

    Every async method runs the same code as the sync one on a worker thread."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> AsyncIterator[AsyncMemstrataStore]:
        memory = await anyio.to_thread.run_sync(_memory_for, conn_string, index)
        store = None
        try:
            store = cls(memory, index=index, ttl=ttl)
            yield store
        finally:
            if store is not None:
                await anyio.to_thread.run_sync(store._stop_sweeper)
            await anyio.to_thread.run_sync(memory.close)

    async def setup(self) -> None:  # type: ignore[override]
        await anyio.to_thread.run_sync(super().setup)

    # -- TTL: coroutines, as on AsyncPostgresStore / AsyncSqliteStore ------------------------------
    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await self.asweep_ttl()

    async def start_ttl_sweeper(  # type: ignore[override]
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        return super().start_ttl_sweeper(sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        return await anyio.to_thread.run_sync(self._stop_sweeper, timeout)

    # -- sync calls: refused on a running event loop, as LangGraph's async stores do ---------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        _refuse_on_event_loop(self, "batch")
        return super().batch(ops)

    def get(self, *args: Any, **kwargs: Any) -> Item | None:
        _refuse_on_event_loop(self, "get")
        return super().get(*args, **kwargs)

    def search(self, *args: Any, **kwargs: Any) -> list[SearchItem]:
        _refuse_on_event_loop(self, "search")
        return super().search(*args, **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> None:
        _refuse_on_event_loop(self, "put")
        super().put(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> None:
        _refuse_on_event_loop(self, "delete")
        super().delete(*args, **kwargs)

    def list_namespaces(self, *args: Any, **kwargs: Any) -> list[tuple[str, ...]]:
        _refuse_on_event_loop(self, "list_namespaces")
        return super().list_namespaces(*args, **kwargs)


def _refuse_on_event_loop(store: BaseStore, method: str) -> None:
    """`asyncio.InvalidStateError` when a sync method is called on a thread running an event loop: the
    call would block the loop for the whole database round trip. The same error, and advice, as
    LangGraph's async stores; from any other thread (a sync graph node's worker) the call runs."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise asyncio.InvalidStateError(
        f"Synchronous calls to {type(store).__name__} detected in the main event loop. "
        "This can lead to deadlocks or performance issues. "
        "Please use the asynchronous interface for main thread operations. "
        f"Specifically, replace `store.{method}(...)` with `await store.a{method}(...)`"
    )


def _memory_for(conn_string: str, index: IndexConfig | None) -> Memory:
    from ..memory import Memory

    embed = (index or {}).get("embed")
    embedder: Embedder | None = embedder_from_index(dict(index or {})) if embed is not None else None
    return Memory(store=conn_string, embedder=embedder)


__all__ = ["AsyncMemstrataStore", "LangChainEmbedder", "MemstrataStore"]
