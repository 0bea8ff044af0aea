"""The storage contract every backend implements (SQLite, PostgreSQL).

Three kinds of data, all keyed by `user_id` first (the isolation and sharding key):

* **memories** — the semantic/episodic/procedural records, with vectors and full text;
* **history** — one event per change of a memory;
* **items** — small JSON documents addressed by (user_id, namespace, key): entities,
  profile facts, the user context object, session summaries, queue entries, receipts.
  Layers above decide what goes in which namespace; backends treat them opaquely.

Every method takes the `user_id` it acts for, and a backend must never return,
change or delete another user's rows (Postgres enforces it again with RLS).
Backends translate driver exceptions into `StoreError` (`raise StoreError(...) from exc`).
The one contract test suite in `tests/contract/` runs against every backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..core.storable import check_all_text, check_json
from ..errors import InvalidInput
from ..models import EventType, HistoryEvent, MemoryKind, MemoryRecord

Vector = npt.NDArray[np.float32]
RETIRING_EVENTS = (EventType.SUPERSEDE, EventType.COMPRESS)
"""The history events that record (in recorded time) a memory stopping being current: `recorded_as_of`."""
RETIRING_EVENTS_SQL = ", ".join(f"'{e.value}'" for e in RETIRING_EVENTS)


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories a list/search may return. Validated by `memstrata.filters`.

    By default only memories current at `as_of` (default: `recorded_as_of`, else now) are returned:
    not superseded (`valid_to` unset or later) and not expired. With `recorded_as_of` = D, only memories
    the store had recorded by D, superseded as the store believed at D (a memory retired after D was
    still current then); see docs/search.md, "What the memory believed on a date".
    """

    kinds: tuple[MemoryKind, ...] = ()
    agent_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_after: datetime | None = None
    created_before: datetime | None = None
    as_of: datetime | None = None
    include_superseded: bool = False
    include_expired: bool = False
    ids: tuple[str, ...] = ()
    content_hashes: tuple[str, ...] = ()
    recorded_as_of: datetime | None = None
    superseded_by: tuple[str, ...] = ()
    """Only memories retired in favour of one of these (the predecessors of a memory)."""

    def current_at(self, now: datetime) -> datetime:
        """The valid time T "current" is judged at: `as_of`, else `recorded_as_of`, else `now`."""
        return self.as_of or self.recorded_as_of or now


def current_at_sql(at: str, alias: str = "m") -> str:
    """The rule "current at valid time T" as one SQL condition on the memories aliased `alias`, with T the
    SQL expression `at` (a placeholder, a parameter, a column): not yet superseded (`valid_to` unset or
    after T), already valid (`valid_from` unset or at/before T) and not expired at T. Both backends use
    this rule; T is the store's clock (or the filter's `as_of`), never the database server's `now()`."""
    return (
        f"({alias}.valid_to IS NULL OR {alias}.valid_to > {at})"
        f" AND ({alias}.valid_from IS NULL OR {alias}.valid_from <= {at})"
        f" AND ({alias}.expires_at IS NULL OR {alias}.expires_at > {at})"
    )


NewItem = tuple[str, str, dict[str, Any]]
"""An item to put in a `Store.save`: (namespace, key, value)."""


@dataclass(frozen=True, slots=True)
class ScoredRow:
    """A backend search result: the record and the raw score of that backend's method.

    For vector search the score is cosine similarity in [-1, 1];
    for keyword search it is a relevance score where higher is better (BM25 / ts_rank).
    """

    record: MemoryRecord
    score: float


@dataclass(frozen=True, slots=True)
class Item:
    """A small JSON document in a user's namespace (entity, profile fact, session, ...)."""

    user_id: str
    namespace: str
    key: str
    value: dict[str, Any]
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session of a user as the episode log shows it: how many current episodes it has and when
    the first and the last were written."""

    session_id: str
    episodes: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True, slots=True)
class ItemRead:
    """`Store.get_item(user_id, namespace, key)` as one read of `Store.read_many`: the `Item` or None."""

    namespace: str
    key: str


@dataclass(frozen=True, slots=True)
class ItemsRead:
    """`Store.list_items(user_id, namespace, limit=limit)` as one read of `Store.read_many`: a list of `Item`."""

    namespace: str
    limit: int = 1000


@dataclass(frozen=True, slots=True)
class MemoriesRead:
    """`Store.list_memories(user_id, where, ...)` as one read of `Store.read_many`: a list of `MemoryRecord`."""

    where: MemoryFilter
    limit: int = 100
    offset: int = 0
    newest_first: bool = True


@dataclass(frozen=True, slots=True)
class GenerationRead:
    """`Store.erasure_generation(user_id)` as one read of `Store.read_many`: an int."""


Read = ItemRead | ItemsRead | MemoriesRead | GenerationRead
"""One of the reads `Store.read_many` answers together."""


def check_read(read: Read) -> None:
    """Refuse a read whose single-read method would refuse it (`check_item`, `check_page`)."""
    if isinstance(read, ItemRead):
        check_item(read.namespace, read.key)
    elif isinstance(read, ItemsRead):
        check_page(read.limit)
    elif isinstance(read, MemoriesRead):
        check_page(read.limit, read.offset)
    elif not isinstance(read, GenerationRead):
        raise InvalidInput(f"not a store read: {type(read).__name__}")


def read_each(store: Store, user_id: str, reads: Sequence[Read]) -> list[Any]:
    """`Store.read_many` answered by the single-read methods, one after another: what a backend without
    round trips to save (SQLite, in process) does, and the meaning every backend's answers must have."""
    for read in reads:
        check_read(read)
    return [_read_one(store, user_id, read) for read in reads]


def _read_one(store: Store, user_id: str, read: Read) -> Any:
    if isinstance(read, ItemRead):
        return store.get_item(user_id, read.namespace, read.key)
    if isinstance(read, ItemsRead):
        return store.list_items(user_id, read.namespace, limit=read.limit)
    if isinstance(read, MemoriesRead):
        return store.list_memories(
            user_id, read.where, limit=read.limit, offset=read.offset, newest_first=read.newest_first
        )
    return store.erasure_generation(user_id)


@runtime_checkable
class Store(Protocol):
    """Persistence for memories, their history, vectors, full text, and per-user items."""

    url: str
    """Where the data lives, with any password redacted (for messages and logs)."""

    # -- lifecycle --------------------------------------------------------
    def bind_embedder(self, name: str, dimensions: int) -> None:
        """Record the embedding model on first use; raise `EmbeddingMismatch` if another was recorded."""
        ...

    def close(self) -> None: ...

    def compact(self) -> dict[str, Any]:
        """Rewrite the storage files so that no deleted text stays in them (`memstrata compact`);
        return what was done (backend-specific figures)."""
        ...

    # -- concurrency and erasure ------------------------------------------
    def user_lock(self, user_id: str) -> AbstractContextManager[None]:
        """Hold the user's reconciliation lock across processes while inside (`storage/user_lock.py`
        adds the in-process lock around it). Not re-entrant: the caller makes it so."""
        ...

    def erasure_generation(self, user_id: str) -> int:
        """How many times the user was erased (0 before the first erasure): the write fence of
        `storage/fence.py`. `erase_user` raises it in the transaction that deletes the user's rows."""
        ...

    # -- memories ---------------------------------------------------------
    def save(
        self,
        user_id: str,
        records: Sequence[MemoryRecord],
        events: Sequence[HistoryEvent] = (),
        vectors: Vector | None = None,
        items: Sequence[NewItem] = (),
    ) -> None:
        """Insert or replace `records` (and their vectors), append `events` and put `items`, atomically:
        all of it is written or (on any error, e.g. a history event id the user already has) nothing.

        `vectors` row i belongs to `records[i]`. It may have fewer rows than there are records: the
        records past its end (and all records when `vectors` is None) keep their stored vectors
        (a metadata-only update, e.g. retiring a superseded memory in the same transaction).
        """
        ...

    def get(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """The user's records with these ids, in the given order; unknown ids are left out."""
        ...

    def list_memories(
        self,
        user_id: str,
        where: MemoryFilter,
        *,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryRecord]:
        """Records matching `where`, by creation time."""
        ...

    def count_memories(self, user_id: str, where: MemoryFilter) -> int: ...

    def vector_search(self, user_id: str, vector: Vector, where: MemoryFilter, *, limit: int) -> list[ScoredRow]:
        """Nearest records by cosine similarity, best first."""
        ...

    def keyword_search(self, user_id: str, query: str, where: MemoryFilter, *, limit: int) -> list[ScoredRow]:
        """Full-text matches (stemmed, any query word), best first."""
        ...

    def hybrid_candidates(
        self, user_id: str, vector: Vector, query: str, where: MemoryFilter, *, limit: int
    ) -> tuple[list[ScoredRow], list[ScoredRow]]:
        """`(vector_search(...), keyword_search(...))` read from one snapshot, in one round trip
        where the backend can: what a hybrid search needs, without paying for two reads."""
        ...

    def list_sessions(self, user_id: str, *, limit: int = 100, offset: int = 0) -> list[SessionRow]:
        """The user's sessions: the distinct session ids of current episodes, the most recently active
        first (ties by id), with their episode counts; a page of `limit` from `offset`."""
        ...

    def delete(self, user_id: str, ids: Sequence[str], events: Sequence[HistoryEvent] = ()) -> int:
        """Delete records, their vectors and full-text entries, scrub their text from history,
        then append `events`; return how many records existed."""
        ...

    def history(self, user_id: str, memory_id: str) -> list[HistoryEvent]:
        """Events of one memory, oldest first."""
        ...

    def record_access(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Increment access counts and set last access time (persisted for time-weighted ranking)."""
        ...

    # -- items ------------------------------------------------------------
    def put_item(self, user_id: str, namespace: str, key: str, value: dict[str, Any]) -> Item: ...

    def get_item(self, user_id: str, namespace: str, key: str) -> Item | None: ...

    def list_items(self, user_id: str, namespace: str, *, limit: int = 1000) -> list[Item]:
        """Items of one namespace, most recently updated first."""
        ...

    def delete_item(self, user_id: str, namespace: str, key: str) -> bool: ...

    # -- reads asked for together -------------------------------------------
    def read_many(self, user_id: str, reads: Sequence[Read]) -> list[Any]:
        """The answers of `reads` (`ItemRead`, `ItemsRead`, `MemoriesRead`, `GenerationRead`), in order: each
        what its single-read method returns (`read_each`), all read from one snapshot where the backend can,
        in one round trip on a networked one (what `context()` asks of the store before it searches).
        Refuses (`InvalidInput`) what the single-read methods refuse, before reading anything."""
        ...

    # -- users ------------------------------------------------------------
    def user_ids(self, *, limit: int = 1000) -> list[str]:
        """Users that have any data (admin/UI listing)."""
        ...

    def all_history(self, user_id: str) -> list[HistoryEvent]:
        """Every history event of the user (export)."""
        ...

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Remove every row of the user in one transaction; return counts per table.

        Afterwards no trace of the user's text may remain in the storage files.
        """
        ...


def check_owned(user_id: str, records: Sequence[MemoryRecord], events: Sequence[HistoryEvent]) -> None:
    """Refuse a write whose records or events belong to another user than the one it acts for."""
    for record in records:
        if record.user_id != user_id:
            raise InvalidInput(f"record {record.id} belongs to another user than {user_id!r}")
    for event in events:
        if event.user_id != user_id:
            raise InvalidInput(f"history event {event.id} belongs to another user than {user_id!r}")


def check_storable(records: Sequence[MemoryRecord], events: Sequence[HistoryEvent] = ()) -> None:
    """Refuse a write holding text no backend can store and read back (NUL, lone surrogates, too
    deep or too large JSON): `InvalidInput` naming the field, before anything is written."""
    for record in records:
        check_all_text(
            {
                "content": record.content,
                "context": record.context,
                "memory id": record.id,
                "agent_id": record.scope.agent_id,
                "session_id": record.scope.session_id,
                "superseded_by": record.superseded_by,
            }
        )
        check_json(record.metadata, "metadata")
        check_json(list(record.source_ids), "source_ids")
    for event in events:
        check_all_text({"history before": event.before, "history after": event.after})
        check_json(event.details, "history details")


def check_item(namespace: str, key: str, value: dict[str, Any] | None = None) -> None:
    """Refuse an item address or value no backend can store and read back (see `check_storable`)."""
    check_all_text({"namespace": namespace, "key": key})
    if value is not None:
        check_json(value, f"{namespace} item")


def check_ids(ids: Sequence[object], what: str = "memory id") -> None:
    """Refuse ids that are not strings, or hold text no backend can take."""
    for value in ids:
        if not isinstance(value, str):
            raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
        check_all_text({what: value})


def check_page(limit: object, offset: object = 0) -> None:
    """Refuse a page size or offset that is not a non-negative integer."""
    for name, value in (("limit", limit), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidInput(f"{name} must be a non-negative integer, got {value!r}")
