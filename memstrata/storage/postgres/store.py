"""The production store: PostgreSQL + pgvector (HNSW) + full text (tsvector/GIN), isolated by RLS.

Connections come from a `psycopg_pool.ConnectionPool` on `url`, which should be a NON-superuser
application role: superusers and BYPASSRLS roles skip row-level security. Every method runs in one
transaction that first sets `app.user_id` with `SET LOCAL` (transaction-local, so pooled connections
never carry a user over; on Citus, with `citus.propagate_set_commands = 'local'` set on every pooled
connection, the same SET LOCAL reaches the shards, where `set_config` would not); the RLS policies
compare each row's `user_id` with it, and every query also names `user_id` explicitly. The reads of a
search and `record_access` send BEGIN, the SET LOCALs, their statements and COMMIT in one pipeline:
one round trip per call (`_round_trip`). A save is one call of the SQL function `memstrata_save`
(migration 13), sent on its own when it needs nothing else in its transaction: the function then sets
`app.user_id` and takes the user's write lock itself, and on Citus the call is delegated whole to the
worker holding the user's shards.
Migrations and DDL go through `owner_url` when given.
Design notes and measurements: docs/postgres.md.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg.types import TypeInfo
from psycopg.types.composite import CompositeInfo, register_composite
from psycopg_pool import ConnectionPool

from ...core.keyword_statistics import statistics_change
from ...errors import ConfigurationError, EmbeddingMismatch, InvalidInput, StoreError
from ...models import HistoryEvent, MemoryKind, MemoryRecord, utcnow
from ..base import (
    GenerationRead,
    Item,
    ItemRead,
    ItemsRead,
    MemoriesRead,
    MemoryFilter,
    NewItem,
    Read,
    ScoredRow,
    SessionRow,
    Vector,
    check_ids,
    check_item,
    check_owned,
    check_page,
    check_read,
    check_storable,
)
from ..crypto import KeyProvider
from ..fence import check_generation, erased, expected_generation, fence_key
from . import queries as q
from .citus import citus_tables, has_citus
from .keyword import postings_statements, statistics_statements
from .migrations import FENCE_TABLE, bind_vector_column, check_embedder, grant_app_role, migrate
from .planner_statistics import PlannerStatistics
from .sealing import PLAIN, RowCodec, SealedRows
from .sql_functions import ERASED_SQLSTATE
from .urls import password_of, redact_url, scrub
from .user_keys import DELETE_KEY, SELECT_KEY, UserKeys, check_encryption, rotate_master_key

log = logging.getLogger(__name__)

_SETTING_NAME = re.compile(r"^[a-z_]+(\.[a-z_]+)?$")
_USER_LOCK = "hashtextextended('memstrata-user:' || %s, 0)"
"""The per-user advisory lock: writes hold it shared for their transaction, erasure exclusively."""
_GENERATION = "SELECT generation FROM erasures WHERE user_key = %s"
_LEARN_LOCK = "hashtextextended('memstrata-learn:' || %s, 0)"
"""The per-user reconciliation lock (storage/user_lock.py), held for a whole learn."""
_LAZY_COMMIT = {"synchronous_commit": "off"}
"""For access bookkeeping: COMMIT returns without waiting for the WAL flush. A crash may lose the last
fraction of a second of access counts, never consistency (docs/postgres.md, "Round trips")."""
_ONE_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
Statement = tuple[str, Sequence[Any]]


_ROW_SECURITY_REFUSED = "42501"
"""insufficient_privilege: what PostgreSQL raises when row-level security refuses a written row."""


class _UserNotSetWhereWritten(Exception):
    """A save sent as its own statement was refused by row-level security (see `PostgresStore.save`)."""


class PostgresStore:
    """`Store` on PostgreSQL. Build it with `PostgresStore.open(url, owner_url=...)`."""

    def __init__(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        *,
        url: str,
        owner_url: str | None,
        dimensions: int | None,
        row_security_enforced: bool,
        ef_search: int = 40,
        keys: UserKeys | None = None,
        fence_in_call: bool = True,
    ) -> None:
        self._pool = pool
        self._fence_in_call = fence_in_call
        """Whether a fenced save may check its fence inside the `memstrata_save` call sent on its own: where
        the call runs (on Citus the user's worker) reads `erasures` locally (one node; a reference table).
        False on a Citus schema whose `erasures` is still hash-distributed (run `memstrata db distribute`)."""
        self._keys = keys
        self._ef_search = ef_search
        self._raw_url = url
        self._owner_url = owner_url
        self._dimensions = dimensions
        self.url = redact_url(url)
        self.planner_statistics = PlannerStatistics(owner_url or url)
        """Refreshes the planner's statistics after bulk writes (planner_statistics.py)."""
        self.row_security_enforced = row_security_enforced
        """False when the application role is a superuser or BYPASSRLS (RLS then protects nothing)."""
        self.encrypted = keys is not None
        """Whether payloads are sealed under per-user data keys (a master key was configured)."""

    # -- lifecycle ----------------------------------------------------------
    @classmethod
    def open(
        cls,
        url: str,
        *,
        owner_url: str | None = None,
        ef_search: int = 40,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        key_provider: KeyProvider | None = None,
        key_cache_size: int = 1024,
        opened_cache_size: int = 10_000,
    ) -> PostgresStore:
        """Connect, migrate (through `owner_url` when given, else `url`) and open the pool.

        `ef_search` is pgvector's `hnsw.ef_search` (candidate list size; higher = better recall,
        slower). Raises `StoreError` (password redacted) when the server cannot be reached.
        On Citus the schema must be distributed once (`memstrata db distribute`, docs/postgres.md).
        With `key_provider` (a master key) payloads are sealed per user (crypto-shredding, docs/privacy.md);
        `key_cache_size` unwrapped data keys are kept in memory, and what the last `opened_cache_size` memory
        payloads opened to (0: none; `crypto.OpenedCache` says why a read can only get back what it just read).
        A store whose rows are sealed refuses to open without its master key or with another one, and a store
        holding plain rows refuses a key.
        """
        if not 1 <= ef_search <= 1000:
            raise ConfigurationError(f"ef_search must be between 1 and 1000, got {ef_search}")
        if pool_size < 1:
            raise ConfigurationError(f"pool_size must be at least 1, got {pool_size}")
        timeout = max(1, round(connect_timeout))  # libpq: whole seconds, 0 would mean "wait forever"
        secrets = (password_of(url), password_of(owner_url or ""))
        app_role, enforced = _probe(url, timeout, secrets)
        info, fence_in_call = _prepare_schema(
            owner_url or url, app_role, timeout, secrets, key_provider, redact_url(url)
        )
        pool = _open_pool(url, info, ef_search=ef_search, pool_size=pool_size, timeout=timeout, secrets=secrets)
        keys = (
            None
            if key_provider is None
            else UserKeys(key_provider, cache_size=key_cache_size, opened_cache_size=opened_cache_size)
        )
        store = cls(
            pool,
            url=url,
            owner_url=owner_url,
            dimensions=None,
            row_security_enforced=enforced,
            ef_search=ef_search,
            keys=keys,
            fence_in_call=fence_in_call,
        )
        try:
            store._dimensions = store._recorded_dimensions()
        except BaseException:
            pool.close()
            raise
        return store

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def transaction(self, user_id: str | None, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[Any]]:
        """A cursor in one transaction on a pooled connection, with `app.user_id` set to `user_id`.

        Every method runs through this. It is public for raw SQL under row-level security (reports,
        EXPLAIN); as the application role such SQL still sees only `user_id`'s rows.
        `None` sets no user: user tables then look empty. psycopg errors become `StoreError`.
        `pipeline`: statements are sent without waiting for their answers (psycopg's pipeline mode),
        from BEGIN to COMMIT; the transaction waits only where it reads a result.
        """
        try:
            with (
                self._pool.connection() as conn,
                conn.pipeline() if pipeline else nullcontext(),
                conn.transaction(),
                conn.cursor() as cur,
            ):
                if user_id is not None:
                    cur.execute(set_local("app.user_id", user_id))
                yield cur
        except (UnicodeEncodeError, psycopg.Error) as exc:
            raise self._failure(exc) from exc

    @contextmanager
    def _write(self, user_id: str, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[Any]]:
        """A write transaction for `user_id` under the user's advisory lock held shared (erasure holds it
        exclusively: an erasure waits for writes in flight, whose rows it then deletes, and a write
        waits for an erasure in flight). Refused (`UserErased`) when the user was erased since the
        current unit of work fenced it (storage/fence.py). `pipeline`: as in `transaction`."""
        with self.transaction(user_id, pipeline=pipeline) as cur:
            cur.execute(f"SELECT pg_advisory_xact_lock_shared({_USER_LOCK})", [user_id])
            if expected_generation(user_id) is not None:
                cur.execute(_GENERATION, [fence_key(user_id)])
                row = cur.fetchone()
                check_generation(user_id, int(row[0]) if row else 0)
            yield cur

    def _writing(self, cur: psycopg.Cursor[Any], user_id: str) -> RowCodec:
        """How this write transaction encodes `user_id`'s rows: sealed under the user's data key (created
        now for a first write) when the store is encrypted."""
        return PLAIN if self._keys is None else SealedRows(self._keys.read_or_create(cur, user_id), self._keys.opened)

    def _reading(self, cur: psycopg.Cursor[Any], user_id: str) -> RowCodec | None:
        """How this read transaction decodes `user_id`'s rows; None when an encrypted store has no key for
        the user (no key, no rows: the first write creates both, erasure deletes both)."""
        if self._keys is None:
            return PLAIN
        key = self._keys.read(cur, user_id)
        return None if key is None else SealedRows(key, self._keys.opened)

    def _read_trip(
        self, user_id: str, build: Callable[[RowCodec], list[Statement]], **options: Any
    ) -> tuple[RowCodec | None, list[list[Any]]]:
        """`_round_trip` of the statements `build` makes for the user's codec. Encrypted, the user's key is
        read in the same round trip and compared with the cached key the statements were built with;
        when it changed (another process erased the user), the read is made again with the current key."""
        if self._keys is None:
            return PLAIN, self._round_trip(user_id, build(PLAIN), **options)
        for _ in range(3):
            key = self._keys.cached(user_id)
            if key is None:
                with self.transaction(user_id) as cur:
                    key = self._keys.read(cur, user_id)
                if key is None:
                    return None, []
            codec = SealedRows(key, self._keys.opened)
            [stored, *results] = self._round_trip(user_id, [(SELECT_KEY, [user_id]), *build(codec)], **options)
            if self._keys.from_wrapped(user_id, bytes(stored[0][0]) if stored else None) is key:
                return codec, results
        raise StoreError(f"the data key of user {user_id!r} kept changing during a read; try again")

    def _read(self, user_id: str, build: Callable[[RowCodec], Statement]) -> tuple[RowCodec | None, list[Any]]:
        """The rows of the one statement `build` makes for the user's codec, in one round trip (`_read_trip`:
        BEGIN, the SET LOCAL, the statement and COMMIT pipelined); no codec and no rows when an encrypted
        store has no key for the user."""
        codec, results = self._read_trip(user_id, lambda c: [build(c)])
        return codec, results[0] if codec is not None else []

    @contextmanager
    def user_lock(self, user_id: str) -> Iterator[None]:
        """Serialize a user's reconciliation across processes (storage/user_lock.py): a session-level
        advisory lock on a connection of its own, outside the pool (the locked work needs pooled
        connections; holding one of them could starve it). Closing the connection releases the lock,
        also when the process dies."""
        try:
            conn = psycopg.connect(self._raw_url, autocommit=True)
            conn.execute(f"SELECT pg_advisory_lock({_LEARN_LOCK})", [user_id])
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store {self.url} failed: {scrub(str(exc), *self._secrets())}") from exc
        try:
            yield
        finally:
            conn.close()

    def erasure_generation(self, user_id: str) -> int:
        """How many times the user was erased (the write fence, storage/fence.py)."""
        [rows] = self._round_trip(user_id, [(_GENERATION, [fence_key(user_id)])])
        return int(rows[0][0]) if rows else 0

    def _secrets(self) -> tuple[str | None, ...]:
        return (password_of(self._raw_url), password_of(self._owner_url or ""))

    def _round_trip(
        self,
        user_id: str,
        statements: Sequence[Statement],
        *,
        begin: str = "BEGIN",
        settings: Mapping[str, str] | None = None,
    ) -> list[list[Any]]:
        """The rows of each statement, run in one transaction as `user_id` in ONE round trip: BEGIN,
        SET LOCAL (the user, then `settings`), the statements and COMMIT are
        pipelined and answered together. After an error the transaction is rolled back before the
        connection goes back to the pool."""
        try:
            with self._pool.connection() as conn:
                try:
                    return _pipelined(conn, user_id, statements, begin=begin, settings=settings or {})
                except BaseException:
                    if conn.info.transaction_status != TransactionStatus.IDLE:
                        conn.rollback()
                    raise
        except UnicodeEncodeError as exc:
            raise _unstorable(exc) from exc
        except psycopg.DataError as exc:
            if not _refused_text(exc):
                raise StoreError(f"PostgreSQL store {self.url} failed: {scrub(str(exc), *self._secrets())}") from exc
            raise _unstorable(exc) from exc
        except psycopg.Error as exc:
            if exc.sqlstate == ERASED_SQLSTATE:  # the write fence (memstrata_check_fence): nothing was written
                raise erased(user_id) from None
            raise StoreError(f"PostgreSQL store {self.url} failed: {scrub(str(exc), *self._secrets())}") from exc

    def _call(self, statement: str, params: Sequence[Any], *, user_id: str | None = None) -> None:
        """Run one statement as its own transaction (autocommit), errors mapped as in `transaction`; the
        write fence refused by `memstrata_save` (`ERASED_SQLSTATE`) is `UserErased` for `user_id`."""
        try:
            with self._pool.connection() as conn:
                conn.execute(statement, params)
        except psycopg.Error as exc:
            if user_id is not None and exc.sqlstate == ERASED_SQLSTATE:
                raise erased(user_id) from None
            if exc.sqlstate == _ROW_SECURITY_REFUSED:
                raise _UserNotSetWhereWritten from exc
            raise self._failure(exc) from exc
        except UnicodeEncodeError as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: UnicodeEncodeError | psycopg.Error) -> Exception:
        """The library's error for a failed statement: text PostgreSQL cannot store (`_unstorable`), else a
        `StoreError` naming the store, its secrets scrubbed."""
        if isinstance(exc, UnicodeEncodeError) or (isinstance(exc, psycopg.DataError) and _refused_text(exc)):
            return _unstorable(exc)
        return StoreError(f"PostgreSQL store {self.url} failed: {scrub(str(exc), *self._secrets())}")

    def _recorded_dimensions(self) -> int | None:
        with self.transaction(None) as cur:
            cur.execute("SELECT value FROM meta WHERE key = 'dimensions'")
            row = cur.fetchone()
        return int(row[0]) if row else None

    # -- embedder binding ---------------------------------------------------
    def bind_embedder(self, name: str, dimensions: int) -> None:
        with self.transaction(None) as cur:
            cur.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dimensions')")
            recorded = dict(cur.fetchall())
        if recorded:
            check_embedder(recorded, name, dimensions, self.url)
        else:
            target = self._owner_url or self._raw_url
            try:
                with psycopg.connect(target, autocommit=True) as owner:
                    bind_vector_column(owner, name, dimensions, self.url)
            except psycopg.Error as exc:
                message = scrub(str(exc), *self._secrets())
                raise StoreError(f"cannot record the embedder in {redact_url(target)}: {message}") from exc
        self._dimensions = dimensions

    # -- memories -----------------------------------------------------------
    def save(
        self,
        user_id: str,
        records: Sequence[MemoryRecord],
        events: Sequence[HistoryEvent] = (),
        vectors: Vector | None = None,
        items: Sequence[NewItem] = (),
    ) -> None:
        check_owned(user_id, records, events)
        check_storable(records, events)
        for namespace, key, value in items:
            check_item(namespace, key, value)
        array: list[np.ndarray | None] = [] if vectors is None else list(self._vector_rows(records, vectors))
        array += [None] * (len(records) - len(array))  # records past the vectors keep their stored vector
        # One function call writes the memories, events, BM25 statistics and postings (sql_functions.SAVE),
        # and checks the write fence (the generation the unit of work read, NULL when unfenced). Without
        # items or a data key to read, the call is sent on its own, as its own transaction (it sets the user
        # and takes the user's write lock itself): one round trip, and on Citus one statement from the
        # coordinator to the worker holding the user's shards, which runs the whole call (docs/postgres.md,
        # "Citus limits"). Otherwise it runs in a pipelined transaction after the lock, the fence check and
        # the items (on Citus on the coordinator, each statement routed).
        expected = expected_generation(user_id)
        if self._keys is None and not items and (expected is None or self._fence_in_call):
            try:
                if records or events:
                    rows = _save_rows(PLAIN, records, array, events)
                    self._call(q.SAVE_FENCED, [user_id, *rows, expected], user_id=user_id)
                self.planner_statistics.wrote(len(records))
                return
            except _UserNotSetWhereWritten:
                # On Citus, when the user's shards moved while the call was delegated to their old worker,
                # the worker writes on the new node, where a call outside a transaction block has not set
                # the user (Citus replays SET LOCAL only inside one), so row-level security refused the
                # rows and the call wrote nothing. The transaction below sets the user on every node it
                # writes on.
                pass
        with self._write(user_id, pipeline=True) as cur:
            codec = self._writing(cur, user_id)
            for namespace, key, value in items:
                _put_item(cur, codec, user_id, namespace, key, value)
            if records or events:
                cur.execute(q.SAVE, [user_id, *_save_rows(codec, records, array, events)])
        self.planner_statistics.wrote(len(records))

    def _vector_rows(self, records: Sequence[MemoryRecord], vectors: Vector) -> list[np.ndarray]:
        """Rows of `vectors`, one per leading record (there may be fewer vectors than records)."""
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] > len(records):
            raise InvalidInput(f"expected at most {len(records)} vectors, got an array of shape {array.shape}")
        if self._dimensions is not None and array.shape[1] != self._dimensions:
            raise EmbeddingMismatch(f"vectors have {array.shape[1]} dimensions; {self.url} uses {self._dimensions}")
        return list(array)

    def get(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        check_ids(ids)
        if not ids:
            return []
        statement = (
            f"SELECT {q.RECORD_COLUMNS} FROM memories m {q.access_join('m')} WHERE m.user_id = %s AND m.id = ANY(%s)"
        )
        codec, rows = self._read(user_id, lambda _: (statement, [user_id, user_id, list(ids)]))
        if codec is None:
            return []
        by_id = {row[1]: codec.record_from_row(row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def list_memories(
        self,
        user_id: str,
        where: MemoryFilter,
        *,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryRecord]:
        return self._read_many(user_id, [MemoriesRead(where, limit, offset, newest_first)])[0]

    def list_sessions(self, user_id: str, *, limit: int = 100, offset: int = 0) -> list[SessionRow]:
        check_page(limit, offset)
        w = q.Where(user_id, MemoryFilter(kinds=(MemoryKind.EPISODE,)))  # no sealed column is compared
        [rows] = self._round_trip(
            user_id,
            [
                (
                    "SELECT m.session_id, count(*), min(m.created_at), max(m.created_at) FROM memories m "
                    f"WHERE {w.sql} AND m.session_id IS NOT NULL GROUP BY m.session_id "
                    "ORDER BY max(m.created_at) DESC, m.session_id LIMIT %s OFFSET %s",
                    [*w.params, limit, offset],
                )
            ],
        )
        return [SessionRow(r[0], int(r[1]), r[2], r[3]) for r in rows]

    def count_memories(self, user_id: str, where: MemoryFilter) -> int:
        def statement(codec: RowCodec) -> Statement:
            w = q.Where(user_id, codec.filter(where))
            return f"SELECT count(*) FROM memories m WHERE {w.sql}", w.params

        _, rows = self._read(user_id, statement)
        return int(rows[0][0]) if rows else 0

    def vector_search(self, user_id: str, vector: Vector, where: MemoryFilter, *, limit: int) -> list[ScoredRow]:
        query = self._query_vector(vector)
        codec, results = self._read_trip(
            user_id,
            lambda c: [_vector_statement(q.Where(user_id, c.filter(where)), query, limit)],
            settings=self._hnsw_settings(limit),
        )
        return [] if codec is None else _vector_hits(results[0], query, codec)

    def _hnsw_settings(self, limit: int) -> dict[str, str]:
        """`hnsw.ef_search` at least `limit`, and the iterative scan, for this transaction (set per
        transaction, not only per session: on Citus only SET LOCAL reaches the shards). Below `limit`,
        the index's first pass cannot hold `limit` rows and the iterative scan has to resume (measured
        at 100k rows, limit 50: p50 5-6 ms at ef_search 40, 4.1-4.6 ms at 50-64). A larger configured
        value is kept."""
        return {"hnsw.ef_search": str(max(self._ef_search, limit)), "hnsw.iterative_scan": "relaxed_order"}

    def _query_vector(self, vector: Vector) -> np.ndarray:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self._dimensions is not None and query.shape[0] != self._dimensions:
            raise EmbeddingMismatch(
                f"query vector has {query.shape[0]} dimensions; {self.url} holds {self._dimensions}"
            )
        return query

    def keyword_search(self, user_id: str, query: str, where: MemoryFilter, *, limit: int) -> list[ScoredRow]:
        def statements(codec: RowCodec) -> list[Statement]:
            terms = codec.query_terms(user_id, query)
            w = q.Where(user_id, codec.filter(where))
            return [_keyword_statement(w, terms, q.keyword_batches(limit)[0], limit)] if terms else []

        codec, results = self._read_trip(user_id, statements)
        if codec is None or not results:
            return []
        return self._keyword_hits(user_id, codec, where, query, results[0], limit)

    def _keyword_hits(
        self, user_id: str, codec: RowCodec, where: MemoryFilter, query: str, rows: list[Any], limit: int
    ) -> list[ScoredRow]:
        """Hits from the rows of the first batch. When the filter rejected too many rows of a full
        batch, the bigger batches are read in turn (one round trip each; rare)."""
        first, *bigger = q.keyword_batches(limit)
        read = first
        w, terms = q.Where(user_id, codec.filter(where)), codec.query_terms(user_id, query)
        for batch in bigger:
            if _keyword_done(rows, read, limit):
                break
            [rows] = self._round_trip(user_id, [_keyword_statement(w, terms, batch, limit)])
            read = batch
        return [ScoredRow(codec.record_from_row(row), float(row[len(q.COLUMNS)])) for row in rows if row[0] is not None]

    def hybrid_candidates(
        self, user_id: str, vector: Vector, query: str, where: MemoryFilter, *, limit: int
    ) -> tuple[list[ScoredRow], list[ScoredRow]]:
        """Both reads in one REPEATABLE READ transaction (one snapshot), in one round trip."""
        query_vector = self._query_vector(vector)

        def statements(codec: RowCodec) -> list[Statement]:
            w, terms = q.Where(user_id, codec.filter(where)), codec.query_terms(user_id, query)
            found = [_vector_statement(w, query_vector, limit)]
            if terms:
                found.append(_keyword_statement(w, terms, q.keyword_batches(limit)[0], limit))
            return found

        codec, results = self._read_trip(user_id, statements, begin=_ONE_SNAPSHOT, settings=self._hnsw_settings(limit))
        if codec is None:
            return [], []
        keyword = self._keyword_hits(user_id, codec, where, query, results[1], limit) if len(results) > 1 else []
        return _vector_hits(results[0], query_vector, codec), keyword

    def delete(self, user_id: str, ids: Sequence[str], events: Sequence[HistoryEvent] = ()) -> int:
        check_owned(user_id, (), events)
        check_ids(ids)
        if not ids:
            return 0
        with self._write(user_id) as cur:
            cur.execute(
                "DELETE FROM memories WHERE user_id = %s AND id = ANY(%s) RETURNING keyword_terms, keyword_length, id",
                [user_id, list(ids)],
            )
            removed = cur.fetchall()
            deleted = len(removed)
            for statement, params in [
                *statistics_statements(user_id, statistics_change(((t, n) for t, n, _ in removed), ())),
                *postings_statements(user_id, ((i, t) for t, _, i in removed), ()),
            ]:
                cur.execute(statement, params)
            cur.execute(q.FORGET_ACCESS, [user_id, list(ids)])
            cur.execute(
                "UPDATE history SET before = NULL, after = NULL WHERE user_id = %s AND memory_id = ANY(%s)",
                [user_id, list(ids)],
            )
            if events:
                codec = self._writing(cur, user_id)
                cur.executemany(q.INSERT_EVENT, [codec.event_params(e) for e in events])
        return int(deleted)

    def history(self, user_id: str, memory_id: str) -> list[HistoryEvent]:
        check_ids([memory_id])
        statement = f"SELECT {q.HISTORY_COLUMNS} FROM history WHERE user_id = %s AND memory_id = %s ORDER BY at, seq"
        codec, rows = self._read(user_id, lambda _: (statement, [user_id, memory_id]))
        return [] if codec is None else [codec.event_from_row(row) for row in rows]

    def all_history(self, user_id: str) -> list[HistoryEvent]:
        statement = f"SELECT {q.HISTORY_COLUMNS} FROM history WHERE user_id = %s ORDER BY at, seq"
        codec, rows = self._read(user_id, lambda _: (statement, [user_id]))
        return [] if codec is None else [codec.event_from_row(row) for row in rows]

    def record_access(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        if not ids:
            return
        self._round_trip(user_id, [(q.RECORD_ACCESS, [at, user_id, list(ids)])], settings=_LAZY_COMMIT)

    # -- items ----------------------------------------------------------------
    def put_item(self, user_id: str, namespace: str, key: str, value: dict[str, Any]) -> Item:
        check_item(namespace, key, value)
        if self._keys is None:
            return self._put_plain_item(user_id, namespace, key, value)
        with self._write(user_id) as cur:
            codec = self._writing(cur, user_id)
            stored_key, stored, updated_at = _put_item(cur, codec, user_id, namespace, key, value)
        return Item(user_id, namespace, key, codec.item_from(namespace, stored_key, stored)[1], updated_at)

    def _put_plain_item(self, user_id: str, namespace: str, key: str, value: dict[str, Any]) -> Item:
        """`put_item` without a data key to read: one round trip (`_round_trip`), the user's write lock taken
        as in `_write`. A fenced write checks the generation after the lock with `memstrata_check_fence`
        (migration 15), which fails the transaction before the upsert when the user was erased since the
        unit of work fenced it (`UserErased`, nothing written)."""
        statements: list[Statement] = [(f"SELECT pg_advisory_xact_lock_shared({_USER_LOCK})", [user_id])]
        expected = expected_generation(user_id)
        if expected is not None:
            statements.append((q.CHECK_FENCE, [user_id, expected]))
        upsert = [user_id, namespace, key, PLAIN.item_value(namespace, key, value), utcnow()]
        *_, rows = self._round_trip(user_id, [*statements, (_UPSERT_ITEM, upsert)])
        [(stored, updated_at)] = rows
        return Item(user_id, namespace, key, PLAIN.item_from(namespace, key, stored)[1], updated_at)

    def get_item(self, user_id: str, namespace: str, key: str) -> Item | None:
        return self._read_many(user_id, [ItemRead(namespace, key)])[0]

    def list_items(self, user_id: str, namespace: str, *, limit: int = 1000) -> list[Item]:
        return self._read_many(user_id, [ItemsRead(namespace, limit)])[0]

    # -- reads asked for together -------------------------------------------------
    def read_many(self, user_id: str, reads: Sequence[Read]) -> list[Any]:
        return self._read_many(user_id, reads)

    def _read_many(self, user_id: str, reads: Sequence[Read]) -> list[Any]:
        """Every read's statement pipelined in one REPEATABLE READ READ ONLY transaction (one snapshot): one
        round trip for them all (`_read_trip`; encrypted, the user's key is read in it too). An encrypted store
        with no key for the user holds none of the user's rows: only the erasure generation is then read."""
        for read in reads:
            check_read(read)
        if not reads:
            return []
        begin = _ONE_SNAPSHOT if len(reads) > 1 else "BEGIN"
        codec, results = self._read_trip(
            user_id, lambda c: [_read_statement(user_id, r, c) for r in reads], begin=begin
        )
        if codec is None:
            return [self.erasure_generation(user_id) if isinstance(r, GenerationRead) else _nothing(r) for r in reads]
        return [_answer(user_id, r, codec, rows) for r, rows in zip(reads, results, strict=True)]

    def delete_item(self, user_id: str, namespace: str, key: str) -> bool:
        check_item(namespace, key)
        with self._write(user_id) as cur:
            codec = self._reading(cur, user_id)
            if codec is None:
                return False
            cur.execute(
                "DELETE FROM items WHERE user_id = %s AND namespace = %s AND key = %s",
                [user_id, namespace, codec.item_key(namespace, key)],
            )
            return cur.rowcount > 0

    def compact(self, *, patience: float = 10.0) -> dict[str, Any]:
        """Rewrite the user tables so that no erased row stays in their files: `VACUUM (FULL)` (plain
        VACUUM only marks dead rows' space reusable; their bytes stay until overwritten), then a
        CHECKPOINT so the WAL segments that still hold the rows can be recycled. Runs through the
        owner URL (VACUUM FULL needs the table owner) and takes an exclusive lock on each table while
        it is rewritten: run it in a quiet period. CHECKPOINT needs a superuser or pg_checkpoint;
        without it, the WAL is recycled at the server's next checkpoint (`checkpoint_timeout`).

        A transaction that started before the erasure may still see the deleted rows, and VACUUM FULL
        must then copy them: such a table is rewritten again after a pause, for up to `patience`
        seconds; what still could not be removed is reported in `dead_rows_kept` (run it again once
        that transaction ended)."""
        target = self._owner_url or self._raw_url
        started = time.perf_counter()
        try:
            with psycopg.connect(target, autocommit=True) as owner:
                kept = {table: _vacuum_full(owner, table) for table in _COMPACTED}
                while any(kept.values()) and time.perf_counter() - started < patience:
                    time.sleep(0.5)
                    kept |= {table: _vacuum_full(owner, table) for table, rows in kept.items() if rows}
                checkpoint = _checkpoint(owner)
        except psycopg.Error as exc:
            raise StoreError(f"cannot compact {redact_url(target)}: {scrub(str(exc), *self._secrets())}") from exc
        return {
            "tables": list(_COMPACTED),
            "dead_rows_kept": {t: n for t, n in kept.items() if n},
            "checkpoint": checkpoint,
            "seconds": round(time.perf_counter() - started, 2),
        }

    @staticmethod
    def rotate_master_key(url: str, *, owner_url: str | None, old: KeyProvider, new: KeyProvider) -> int:
        """Rewrap every user's data key from the `old` master key to `new` through the owner URL (stop
        the servers first: a process still holding `old` would wrap new users' keys under it); return
        how many keys were rewrapped. Refused (`StoreError`) when `old` is not the store's master key."""
        target = owner_url or url
        secrets = (password_of(url), password_of(owner_url or ""))
        try:
            with psycopg.connect(target, autocommit=True) as owner:
                return rotate_master_key(owner, old, new, redact_url(url))
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot rotate the master key of {redact_url(target)}: {scrub(str(exc), *secrets)}"
            ) from exc

    # -- users ----------------------------------------------------------------
    def user_ids(self, *, limit: int = 1000) -> list[str]:
        """Users with memories or items, via the SECURITY DEFINER `memstrata_user_ids` (ids only)."""
        with self.transaction(None) as cur:
            cur.execute("SELECT memstrata_user_ids(%s)", [limit])
            return [row[0] for row in cur.fetchall()]

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Delete the user's rows from every table in one transaction.

        The rows are gone for every reader at commit; their bytes stay in heap pages and WAL until the
        table files are rewritten (`memstrata compact`, VACUUM FULL; see docs/privacy.md). Holds the
        user's advisory lock exclusively (writes in flight finish first and are deleted too) and
        raises the user's erasure generation, so fenced work that started earlier never writes again.
        """
        with self.transaction(user_id) as cur:
            cur.execute(f"SELECT pg_advisory_xact_lock({_USER_LOCK})", [user_id])
            cur.execute(q.LOCK_USER, [user_id])  # also where `memstrata_save` takes it (the user's worker on Citus)
            cur.execute(
                "INSERT INTO erasures (user_key, generation) VALUES (%s, 1) "
                "ON CONFLICT (user_key) DO UPDATE SET generation = erasures.generation + 1",
                [fence_key(user_id)],
            )
            counts = {}
            for table in ("memories", "history", "items"):
                cur.execute(f"DELETE FROM {table} WHERE user_id = %s", [user_id])
                counts[table] = int(cur.rowcount)
            for table in ("memory_access", "keyword_postings", "keyword_documents", "keyword_totals"):  # not counted
                cur.execute(f"DELETE FROM {table} WHERE user_id = %s", [user_id])
            cur.execute(DELETE_KEY, [user_id])  # crypto-shredding: sealed copies elsewhere no longer open
            if self._keys is not None:
                self._keys.shred(user_id)  # a key kept outside the database goes too (user_keys.py)
        if self._keys is not None:
            self._keys.forget(user_id)
        return counts


_COMPACTED = (
    "memories",
    "history",
    "items",
    "memory_access",
    "keyword_postings",
    "keyword_documents",
    "keyword_totals",
    "erasures",
    "user_keys",
)


_KEPT = re.compile(r"(\d+) dead row versions cannot be removed yet")


def _vacuum_full(conn: psycopg.Connection[Any], table: str) -> int:
    """VACUUM (FULL, VERBOSE) one table; return how many dead rows it had to keep (still visible to
    an older transaction), read from VACUUM's report."""
    notes: list[str] = []
    handler = lambda diagnostic: notes.append(f"{diagnostic.message_primary} {diagnostic.message_detail}")  # noqa: E731
    conn.add_notice_handler(handler)
    try:
        conn.execute(sql.SQL("VACUUM (FULL, ANALYZE, VERBOSE) {}").format(sql.Identifier(table)))
    finally:
        conn.remove_notice_handler(handler)
    return sum(int(m.group(1)) for note in notes for m in _KEPT.finditer(note))


def _checkpoint(conn: psycopg.Connection[Any]) -> bool:
    try:
        conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        return False
    return True


def _refused_text(exc: psycopg.DataError) -> bool:
    """Whether PostgreSQL refused text of the request (NUL, bad encoding), not failed on its own."""
    message = str(exc)
    return any(sign in message for sign in ("0x00", "\\u0000", "invalid byte sequence", "for type json"))


def _unstorable(exc: Exception) -> Exception:
    """A value PostgreSQL cannot take (NUL in text, a lone surrogate, a number out of range): the
    caller's input, so `InvalidInput` (422), not a store failure. Its text is not echoed back."""
    if isinstance(exc, UnicodeEncodeError):
        return InvalidInput("the request holds text that is not valid Unicode (a lone surrogate)")
    if "invalid byte sequence" in str(exc):
        return InvalidInput("the request holds text that is not valid UTF-8")
    if "for type json" in str(exc):
        return InvalidInput("a metadata filter holds a value JSON cannot carry (a lone surrogate, NaN)")
    return InvalidInput("the request holds a NUL character, which text cannot contain")


def _pipelined(
    conn: psycopg.Connection[Any],
    user_id: str,
    statements: Sequence[Statement],
    *,
    begin: str,
    settings: Mapping[str, str],
) -> list[list[Any]]:
    with conn.pipeline():
        conn.execute(begin)
        for name, value in {"app.user_id": user_id, **settings}.items():
            conn.execute(set_local(name, value))
        cursors = [conn.execute(text, params) for text, params in statements]
        conn.execute("COMMIT")
    return [cur.fetchall() if cur.description else [] for cur in cursors]


_ITEM = "SELECT value, updated_at FROM items WHERE user_id = %s AND namespace = %s AND key = %s"
_ITEMS = (
    "SELECT key, value, updated_at FROM items WHERE user_id = %s AND namespace = %s "
    "ORDER BY updated_at DESC, key LIMIT %s"
)


def _read_statement(user_id: str, read: Read, codec: RowCodec) -> Statement:
    """The statement of one read of `PostgresStore.read_many` for the user's codec."""
    if isinstance(read, ItemRead):
        return _ITEM, [user_id, read.namespace, codec.item_key(read.namespace, read.key)]
    if isinstance(read, ItemsRead):
        return _ITEMS, [user_id, read.namespace, read.limit]
    if isinstance(read, MemoriesRead):
        w = q.Where(user_id, codec.filter(read.where))
        return q.list_sql(w, newest_first=read.newest_first), [*w.params, read.limit, read.offset, user_id]
    return _GENERATION, [fence_key(user_id)]


def _answer(user_id: str, read: Read, codec: RowCodec, rows: list[Any]) -> Any:
    """What the single-read method returns for `read`, from the rows of its statement."""
    if isinstance(read, ItemRead):
        if not rows:
            return None
        [(value, updated_at)] = rows
        stored_key = codec.item_key(read.namespace, read.key)
        return Item(
            user_id, read.namespace, read.key, codec.item_from(read.namespace, stored_key, value)[1], updated_at
        )
    if isinstance(read, ItemsRead):
        return [Item(user_id, read.namespace, *codec.item_from(read.namespace, k, v), u) for k, v, u in rows]
    if isinstance(read, MemoriesRead):
        return [codec.record_from_row(row) for row in rows]
    return int(rows[0][0]) if rows else 0


def _nothing(read: Read) -> Any:
    """The answer of a read of the user's rows when the user has none (no data key, no rows)."""
    return None if isinstance(read, ItemRead) else []


def set_local(name: str, value: str) -> sql.Composed:
    """`SET LOCAL name = 'value'`: the value quoted as a literal (SET takes no bind parameters), the
    name one of the store's own constants."""
    if not _SETTING_NAME.match(name):
        raise ValueError(f"not a setting name: {name!r}")
    return sql.SQL("SET LOCAL {} = {}").format(sql.SQL(name), sql.Literal(value))


def _vector_statement(w: q.Where, query: np.ndarray, limit: int) -> Statement:
    """Nearest rows. A query with no direction (all zeros) has cosine 0 with every row (as in the
    SQLite store), so any order is right: then the oldest rows first."""
    if not query.any():
        return q.list_sql(w, newest_first=False), [*w.params, limit, 0, w.params[0]]
    return q.vector_sql(w), [query, *w.params, query, limit, w.params[0]]


def _vector_hits(rows: list[Any], query: np.ndarray, codec: RowCodec) -> list[ScoredRow]:
    if not query.any():
        return [ScoredRow(codec.record_from_row(row), 0.0) for row in rows]
    return [ScoredRow(codec.record_from_row(row), float(row[-1])) for row in rows]


def _keyword_statement(w: q.Where, terms: list[str], batch: int | None, limit: int) -> Statement:
    return q.keyword_sql(w), [w.params[0], terms, batch, *w.params, limit]


def _keyword_done(rows: list[Any], batch: int | None, limit: int) -> bool:
    """Whether a batch's rows are final: enough hits, or the batch held every match."""
    hits = sum(1 for row in rows if row[0] is not None)
    return hits >= limit or batch is None or rows[0][-1] < batch


def _prepare_schema(
    target: str,
    app_role: str,
    timeout: int,
    secrets: tuple[str | None, ...],
    key_provider: KeyProvider | None,
    where: str,
) -> tuple[list[TypeInfo], bool]:
    """Migrate through `target` (the owner), grant the application role, check the master key (or its
    absence) against the store's rows, return the types the pooled connections register: the vector
    type and the row types of `memstrata_save` (checked against `queries.MemoryWrite` / `EventWrite`), and
    whether a save sent on its own may check its fence in the call (`PostgresStore._fence_in_call`)."""
    try:
        with psycopg.connect(target, autocommit=True, connect_timeout=timeout) as owner:
            migrate(owner)
            if _scalar(owner, "SELECT current_user") != app_role:
                grant_app_role(owner, app_role)
            check_encryption(owner, key_provider, where)
            info = TypeInfo.fetch(owner, "vector")
            rows = [CompositeInfo.fetch(owner, name) for name in _ROW_TYPES]
            fence_in_call = not has_citus(owner) or citus_tables(owner).get(FENCE_TABLE) != "distributed"
    except psycopg.Error as exc:
        message = scrub(str(exc), *secrets)
        raise StoreError(f"cannot prepare the PostgreSQL schema at {redact_url(target)}: {message}") from exc
    if info is None:  # pragma: no cover - migrate() creates or requires the extension
        raise StoreError(f"the vector type is missing in {redact_url(target)}")
    for (name, python_type), row in zip(_ROW_TYPES.items(), rows, strict=True):
        if row is None or tuple(row.field_names) != python_type.fields:  # pragma: no cover - migration 13
            raise StoreError(f"the row type {name} in {redact_url(target)} is not the one this memstrata writes")
    return [info, *(r for r in rows if r is not None)], fence_in_call


_ROW_TYPES: dict[str, type[q.MemoryWrite] | type[q.EventWrite]] = {
    "memstrata_memory_write": q.MemoryWrite,
    "memstrata_event_write": q.EventWrite,
}
"""The composite types of `memstrata_save`'s arguments, and the Python types dumped as them."""


def _open_pool(
    url: str, types: list[TypeInfo], *, ef_search: int, pool_size: int, timeout: int, secrets: tuple[str | None, ...]
) -> ConnectionPool[psycopg.Connection[Any]]:
    """The application role's pool; each new connection gets the vector type and the session settings."""

    vector, *rows = types

    def configure(conn: psycopg.Connection[Any]) -> None:
        register_vector_info(conn, vector)
        for row, python_type in zip(rows, _ROW_TYPES.values(), strict=True):
            assert isinstance(row, CompositeInfo)
            register_composite(row, conn, python_type)
        conn.execute(
            "SELECT set_config('plan_cache_mode', 'force_custom_plan', false), "
            "set_config('hnsw.ef_search', %s, false), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', false), "
            "set_config('timezone', 'UTC', false), "
            "set_config('citus.propagate_set_commands', 'local', false)",
            [str(ef_search)],
        )

    pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
        url,
        min_size=1,
        max_size=pool_size,
        kwargs={"autocommit": True, "prepare_threshold": None, "connect_timeout": timeout},
        configure=configure,
        open=False,
        name="memstrata",
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except psycopg.Error as exc:
        pool.close()
        message = scrub(str(exc), *secrets)
        raise StoreError(f"cannot open a connection pool to {redact_url(url)}: {message}") from exc
    return pool


def _probe(url: str, timeout: int, secrets: tuple[str | None, ...]) -> tuple[str, bool]:
    """Connect once as the application role: (role name, whether RLS applies to it)."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=timeout) as conn:
            row = conn.execute(
                "SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redact_url(url)}: {scrub(str(exc), *secrets)}") from exc
    if row is None:  # pragma: no cover - current_user always has a pg_roles row
        raise StoreError(f"cannot read the current role at {redact_url(url)}")
    role, superuser, bypass = row
    enforced = not (superuser or bypass)
    if not enforced:
        log.warning(
            "PostgreSQL role %r is a superuser or has BYPASSRLS: row-level security does not apply to it; "
            "connect the store as a NOSUPERUSER NOBYPASSRLS application role",
            role,
        )
    return str(role), enforced


def _scalar(conn: psycopg.Connection[Any], query: str) -> Any:
    row = conn.execute(query).fetchone()
    return None if row is None else row[0]


def _save_rows(
    codec: RowCodec,
    records: Sequence[MemoryRecord],
    vectors: Sequence[np.ndarray | None],
    events: Sequence[HistoryEvent],
) -> tuple[list[q.MemoryWrite], list[q.EventWrite]]:
    """The memories and events of `memstrata_save` (one vector or None per record: None keeps the stored
    vector). A repeated id is written once, as its last record, with the last vector given for it: what
    writing the records one after another would leave."""
    memories: dict[str, q.MemoryWrite] = {}
    for record, vector in zip(records, vectors, strict=True):
        earlier = memories.get(record.id)
        kept = earlier[-1] if vector is None and earlier is not None else vector
        params = codec.record_params(record, codec.record_terms(record))
        memories[record.id] = q.MemoryWrite((*params[1:], kept))
    return list(memories.values()), [q.EventWrite(codec.event_params(e)[1:]) for e in events]


_UPSERT_ITEM = (
    "INSERT INTO items (user_id, namespace, key, value, updated_at) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (user_id, namespace, key) DO UPDATE SET value = EXCLUDED.value, "
    "updated_at = EXCLUDED.updated_at RETURNING value, updated_at"
)
"""Params: user_id, namespace, the key as stored, the value as stored, the update time."""


def _put_item(
    cur: psycopg.Cursor[Any], codec: RowCodec, user_id: str, namespace: str, key: str, value: dict[str, Any]
) -> tuple[str, Any, datetime]:
    """Upsert one item in the open transaction: (the key as stored, the value as stored, its update time)."""
    stored_key = codec.item_key(namespace, key)
    cur.execute(_UPSERT_ITEM, [user_id, namespace, stored_key, codec.item_value(namespace, key, value), utcnow()])
    stored, updated_at = _row(cur)
    return stored_key, stored, updated_at


def _row(cur: psycopg.Cursor[Any]) -> tuple[Any, ...]:
    row = cur.fetchone()
    if row is None:  # pragma: no cover - INSERT ... RETURNING always returns the row
        raise StoreError("the database returned no row")
    return tuple(row)
