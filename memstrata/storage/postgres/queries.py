"""SQL text and row mapping for the PostgreSQL store (pure: no connections here).

Every user-supplied value travels as a bind parameter; the SQL strings below are built only from
constant fragments. Filter semantics mirror `memstrata.storage.sqlite` exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from ...core.keyword_index import KeywordTerms
from ...core.retrieval import date_text
from ...models import EventType, HistoryEvent, MemoryKind, MemoryRecord, Scope, utcnow
from ..base import RETIRING_EVENTS_SQL, MemoryFilter
from .keyword import row_values

COLUMNS = (
    "user_id",
    "id",
    "agent_id",
    "session_id",
    "kind",
    "content",
    "metadata",
    "importance",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "superseded_by",
    "expires_at",
    "source_ids",
    "access_count",
    "last_accessed_at",
    "content_hash",
    "pinned",
    "context",
)
SELECT_COLUMNS = ", ".join(f"m.{c}" for c in COLUMNS)
"""The record columns with table alias `m`, in `record_from_row` order, as stored in `memories`."""

_ACCESS_COLUMNS = ("access_count", "last_accessed_at")


def record_columns(alias: str) -> str:
    """The record columns of rows aliased `alias`, in `record_from_row` order, with the access statistics
    of `memory_access` (joined as `a`, see `access_join`) where it has a row for the memory."""
    return ", ".join(f"coalesce(a.{c}, {alias}.{c})" if c in _ACCESS_COLUMNS else f"{alias}.{c}" for c in COLUMNS)


def access_join(alias: str) -> str:
    """`LEFT JOIN memory_access a` onto the rows aliased `alias` (one row at most per memory). Takes one
    parameter, the user id: rows of `alias` are that user's. Naming the user as a parameter, rather
    than `a.user_id = {alias}.user_id`, keeps Citus 13 routing the statement to the user's shard (its
    planner crashes on the column form after a CTE under row-level security)."""
    return f"LEFT JOIN memory_access a ON a.user_id = %s AND a.memory_id = {alias}.id"


RECORD_COLUMNS = record_columns("m")
"""`SELECT {RECORD_COLUMNS} FROM memories m {access_join('m')}`: whole records, current access statistics
(the join's parameter comes first)."""

RECORD_ACCESS = (
    "INSERT INTO memory_access (user_id, memory_id, access_count, last_accessed_at) "
    "SELECT m.user_id, m.id, m.access_count + 1, %s FROM memories m WHERE m.user_id = %s AND m.id = ANY(%s) "
    "ON CONFLICT (user_id, memory_id) DO UPDATE SET access_count = memory_access.access_count + 1, "
    "last_accessed_at = EXCLUDED.last_accessed_at"
)
"""Params: time, user_id, ids. The first access starts from the count stored with the record."""

FORGET_ACCESS = "DELETE FROM memory_access WHERE user_id = %s AND memory_id = ANY(%s)"
"""Params: user_id, ids. After a record is written or deleted its own columns hold the truth."""

HISTORY_COLUMNS = "user_id, id, memory_id, event, at, before, after, details"

WRITE_COLUMNS = (*COLUMNS, "date_text", "keyword_terms", "keyword_frequencies", "keyword_length")
"""What `record_params` binds: the record, the date written out (`memstrata.core.retrieval.date_text`),
then what keyword search finds it under (`keyword.row_values`)."""
INSERT_EVENT = f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"

SAVE = "SELECT memstrata_save(%s, %s, %s)"
"""Params: user_id, memories (`MemoryWrite`), events (`EventWrite`): the writes of a save in one call
(sql_functions.SAVE), unfenced."""
SAVE_FENCED = "SELECT memstrata_save(%s, %s, %s, %s)"
"""Params: as `SAVE`, then the erasure generation the unit of work fenced the user at (None: unfenced). The
call raises `sql_functions.ERASED_SQLSTATE` instead of writing when the user was erased since (migration 14)."""

CHECK_FENCE = "SELECT memstrata_check_fence(%s, %s)"
"""Params: user_id, the erasure generation the unit of work fenced the user at. Raises
`sql_functions.ERASED_SQLSTATE` when the user was erased since (migration 15): the write transaction it is
part of writes nothing."""

LOCK_USER = "SELECT memstrata_lock_user(%s)"
"""Params: user_id. The user's write lock, exclusively, where `memstrata_save` takes it (sql_functions.LOCK_USER)."""


class MemoryWrite(tuple[Any, ...]):
    """A row of the composite type `memstrata_memory_write`: `WRITE_COLUMNS` after user_id, then the
    embedding (None: keep the stored one). Registered on every pooled connection (`register_composite`)."""

    __slots__ = ()
    fields = (*WRITE_COLUMNS[1:], "embedding")


class EventWrite(tuple[Any, ...]):
    """A row of the composite type `memstrata_event_write`: `HISTORY_COLUMNS` after user_id."""

    __slots__ = ()
    fields = tuple(HISTORY_COLUMNS.split(", ")[1:])


def record_params(record: MemoryRecord, terms: KeywordTerms) -> list[Any]:
    """Bind parameters (`WRITE_COLUMNS`): after user_id, a `MemoryWrite` with the vector added."""
    return [
        record.user_id,
        record.id,
        record.scope.agent_id,
        record.scope.session_id,
        record.kind.value,
        record.content,
        Jsonb(record.metadata),
        record.importance,
        record.created_at,
        record.updated_at,
        record.valid_from,
        record.valid_to,
        record.superseded_by,
        record.expires_at,
        list(record.source_ids),
        record.access_count,
        record.last_accessed_at,
        record.content_hash,
        record.pinned,
        record.context,
        date_text(record.created_at),
        *row_values(terms),
    ]


def event_params(event: HistoryEvent) -> list[Any]:
    return [
        event.user_id,
        event.id,
        event.memory_id,
        event.event.value,
        event.at,
        event.before,
        event.after,
        Jsonb(event.details),
    ]


def record_from_row(row: Sequence[Any]) -> MemoryRecord:
    """A `MemoryRecord` from the first `len(COLUMNS)` values of a row."""
    (
        user_id,
        id_,
        agent_id,
        session_id,
        kind,
        content,
        metadata,
        importance,
        created,
        updated,
        valid_from,
        valid_to,
        superseded_by,
        expires_at,
        source_ids,
        access_count,
        last_accessed,
        chash,
        pinned,
        context,
    ) = row[: len(COLUMNS)]
    return MemoryRecord(
        id=id_,
        scope=Scope.from_storage(user_id, agent_id, session_id),
        kind=MemoryKind(kind),
        content=content,
        created_at=created,
        updated_at=updated,
        metadata=metadata,
        importance=importance,
        valid_from=valid_from,
        valid_to=valid_to,
        superseded_by=superseded_by,
        expires_at=expires_at,
        source_ids=tuple(source_ids),
        access_count=access_count,
        last_accessed_at=last_accessed,
        content_hash=chash,
        pinned=pinned,
        context=context,
    )


def event_from_row(row: Sequence[Any]) -> HistoryEvent:
    user_id, id_, memory_id, event, at, before, after, details = row
    return HistoryEvent(
        id=id_,
        memory_id=memory_id,
        user_id=user_id,
        event=EventType(event),
        at=at,
        before=before,
        after=after,
        details=details,
    )


_EVENTS_OF_M = "FROM history h WHERE h.user_id = %s AND h.memory_id = m.id"
_RECORDED = f"coalesce((SELECT min(h.at) {_EVENTS_OF_M}), m.created_at)"
"""When the store recorded memory `m` (its first history event, else `created_at`). Params: user_id."""
_RETIRED = (
    f"coalesce((SELECT min(h.at) {_EVENTS_OF_M} AND h.event IN ({RETIRING_EVENTS_SQL})), "
    f"CASE WHEN m.valid_to IS NOT NULL THEN {_RECORDED} END)"
)
"""When the store stopped believing `m` current; NULL while it is current. Params: user_id, user_id."""


class Where:
    """The SQL condition (table alias `m`) and parameters for one user's `MemoryFilter`.

    Always starts with an explicit `m.user_id = %s`: row-level security enforces the same
    condition again, and the explicit form lets the planner estimate a tenant's real size.
    """

    def __init__(self, user_id: str, where: MemoryFilter, *, now: datetime | None = None) -> None:
        self.clauses: list[str] = ["m.user_id = %s"]
        self.params: list[Any] = [user_id]
        at = where.current_at(now or utcnow())
        if where.kinds:
            self._add("m.kind = ANY(%s)", [k.value for k in where.kinds])
        if where.ids:
            self._add("m.id = ANY(%s)", list(where.ids))
        if where.content_hashes:
            self._add("m.content_hash = ANY(%s)", list(where.content_hashes))
        if where.superseded_by:
            self._add("m.superseded_by = ANY(%s)", list(where.superseded_by))
        if where.agent_id is not None:
            self._add("m.agent_id = %s", where.agent_id)
        if where.session_id is not None:
            self._add("m.session_id = %s", where.session_id)
        for key, value in where.metadata.items():
            if value is None:  # absent or JSON null, as json_extract(...) IS NULL in SQLite
                self._add("coalesce(m.metadata -> %s, 'null'::jsonb) = 'null'::jsonb", key)
            else:
                self.clauses.append("m.metadata -> %s = %s")
                self.params.extend([key, Jsonb(value)])
        if where.created_after is not None:
            self._add("m.created_at >= %s", where.created_after)
        if where.created_before is not None:
            self._add("m.created_at < %s", where.created_before)
        self._holding(user_id, where, at)

    def _holding(self, user_id: str, where: MemoryFilter, at: datetime) -> None:
        """Which memories hold at valid time `at`, as the store believed at `where.recorded_as_of` (default:
        as it believes now): the one place of this store that says what is current at a time (the SQLite
        store's `_Where._holding` states the same rule).

        Recorded time is read from history: a memory was recorded at its first event (else `created_at`)
        and stopped being believed current at its first supersede/compress event (a memory stored as history
        has `valid_to` and no such event: never believed current). The user id is a parameter of the history
        subqueries, as in `access_join`, so Citus routes them to the user's shard."""
        known = where.recorded_as_of
        if known is not None:
            self.clauses.append(f"{_RECORDED} <= %s")
            self.params.extend([user_id, known])
        if not where.include_superseded:
            if known is None:
                self._add("(m.valid_to IS NULL OR m.valid_to > %s)", at)
            else:  # retired only after D: still current as believed at D
                self.clauses.append(f"(m.valid_to IS NULL OR m.valid_to > %s OR {_RETIRED} > %s)")
                self.params.extend([at, user_id, user_id, known])
            self._add("(m.valid_from IS NULL OR m.valid_from <= %s)", at)
        if not where.include_expired:
            self._add("(m.expires_at IS NULL OR m.expires_at > %s)", at)

    def _add(self, clause: str, param: Any) -> None:
        self.clauses.append(clause)
        self.params.append(param)

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses)


def list_sql(where: Where, *, newest_first: bool) -> str:
    """Params: *where.params, limit, offset, user_id.

    The page is chosen first, by the memories' own columns, and only its rows are joined with their access
    statistics (`access_join`): a page of one out of a user's thousands of memories joins one row, not
    every row the filter passes (the order reads no access column, so the rows are the same)."""
    order = "DESC" if newest_first else "ASC"
    return (
        f"WITH page AS MATERIALIZED (SELECT {SELECT_COLUMNS}, m.seq FROM memories m WHERE {where.sql} "
        f"ORDER BY m.created_at {order}, m.seq {order} LIMIT %s OFFSET %s) "
        f"SELECT {record_columns('n')} FROM page n {access_join('n')} ORDER BY n.created_at {order}, n.seq {order}"
    )


def vector_sql(where: Where) -> str:
    """Nearest rows by cosine distance. Params: query vector, *where.params, query vector, limit, user_id.

    The inner ORDER BY `embedding <=> q` is the shape the HNSW index serves; with
    `hnsw.iterative_scan = relaxed_order` the index may return rows slightly out of order,
    so the materialized CTE is re-sorted outside (pgvector's documented pattern). A stored
    all-zero vector has no cosine (NaN): it scores 0, as in the SQLite store.
    """
    return (
        f"WITH nearest AS MATERIALIZED ("
        f"SELECT {SELECT_COLUMNS}, m.embedding <=> %s AS distance FROM memories m "
        f"WHERE {where.sql} AND m.embedding IS NOT NULL "
        f"ORDER BY m.embedding <=> %s LIMIT %s) "
        f"SELECT {record_columns('n')}, n.distance, CASE WHEN n.distance = 'NaN' THEN 0 ELSE 1 - n.distance END "
        f"FROM nearest n {access_join('n')} ORDER BY n.distance"
    )


def keyword_sql(where: Where) -> str:
    """Keyword matches best first (BM25). Params: user_id, terms, batch, *where.params, limit.

    `memstrata_keyword_top` (SECURITY DEFINER, see sql_functions.py) returns the user's `batch`
    best matches by rank (found through the GIN index) as whole rows aliased `m`, with their access
    statistics; the filter applies to them. Rows: the record columns, rank, seq, then how many
    matches the batch held; one row of NULLs (but that count) when nothing passed the filter. If
    fewer than `limit` rows pass and the batch was full, the caller retries with a bigger batch.
    The statement reads no table besides the function: on Citus it then runs on the coordinator,
    and the function's own statements are routed to the user's shard.
    """
    return (
        "WITH matches AS MATERIALIZED (SELECT * FROM memstrata_keyword_top(%s, %s, %s)), "
        f"hits AS (SELECT {SELECT_COLUMNS}, m.rank, m.seq FROM matches m WHERE {where.sql} "
        "ORDER BY m.rank DESC, m.created_at DESC, m.seq DESC LIMIT %s) "
        f"SELECT {', '.join(f'h.{c}' for c in COLUMNS)}, h.rank, h.seq, c.fetched "
        "FROM (SELECT count(*) AS fetched FROM matches) c LEFT JOIN hits h ON true "
        "ORDER BY h.rank DESC, h.created_at DESC, h.seq DESC"
    )


def keyword_batches(limit: int) -> list[int | None]:
    """Batch sizes keyword search asks for, in turn: small first, then everything (None).

    The first batch leaves room for half as many rows again as wanted: the search's own filter (current
    memories only) rarely rejects more, and every row of a batch is built whole (about 0.05 ms each; on
    LoCoMo conversations with BM25, where most memories hold some query term, a batch of 4 x limit
    cost more than ranking). A filter that rejects more costs one more round trip, never a result."""
    first = max(limit + limit // 2, 64)
    return [first, first * 16, None]
