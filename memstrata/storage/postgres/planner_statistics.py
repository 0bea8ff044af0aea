"""Planner statistics gathered right after bulk writes, so the first searches after an import use the
plans of steady state (docs/postgres.md, "Statistics after bulk writes").

PostgreSQL's autovacuum analyzes a table once 10 % of it changed, but only at its next round (up to
`autovacuum_naptime`, a minute by default, later on a busy server): a search right after a bulk import
into an existing database is planned with the statistics of the table before the import. The store
counts the memories it writes; every `CHECK_EVERY_ROWS` it compares the rows changed since the last
ANALYZE (its own count, or the server's `pg_stat_user_tables.n_mod_since_analyze`, which counts every
writer but is published with a delay of up to a second, whichever is larger) with the table's size,
and runs ANALYZE when `needs_analyze` says so. ANALYZE needs the table owner: it runs through the owner
URL when the store has one (as the application role it is skipped with a warning from the server).
On Citus the coordinator holds no rows, so its counters stay at zero: the workers' autovacuum keeps
the shards' statistics.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import psycopg

log = logging.getLogger(__name__)

CHECK_EVERY_ROWS = 1000
"""Memories written by this store between two reads of the server's change counter."""

ANALYZE_FROM_ROWS = 1000
ANALYZE_SHARE = 0.5
"""ANALYZE once at least this many rows, and this share of the table, changed since the last one: plans
go wrong when a user's rows are underestimated by orders of magnitude (a user the statistics have
never seen is estimated at one row), not by half; every ANALYZE costs the import time (it samples up
to 30,000 rows per table)."""

ANALYZED_TABLES = ("memories", "history", "keyword_documents")
VACUUMED_TABLES = ("keyword_postings",)
"""Vacuumed (and analyzed) rather than only analyzed: keyword search reads their primary key alone
(an index-only scan) only where the visibility map marks the pages all-visible, which VACUUM does; until
then each posting read also reads its heap row (measured on LoCoMo conversations: 16 → 5 ms for a
query of 1,566 postings). Their rows are only inserted and deleted, so VACUUM reads the pages written
since the last one."""

_CHANGED = (
    "SELECT s.n_mod_since_analyze, c.reltuples FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
    "WHERE s.relid = 'memories'::regclass"
)


def needs_analyze(changed: int, rows: float) -> bool:
    """Whether `changed` rows since the last ANALYZE of a table of about `rows` rows (negative: never
    analyzed) call for a new one (pure)."""
    return changed >= max(ANALYZE_FROM_ROWS, ANALYZE_SHARE * max(rows, 0.0))


class PlannerStatistics:
    """Counts a store's writes and analyzes the tables after bulk writes (thread-safe)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._unchecked = 0
        self._since_analyze = 0
        self.analyzed = 0
        """How many times this store ran ANALYZE (read by tests and benchmarks)."""
        self.enabled = True
        """False: never ANALYZE (a benchmark's comparison with the store that did not)."""

    def wrote(self, rows: int) -> None:
        """Called after a committed write of `rows` memories; may ANALYZE (one statement per table)."""
        if not self.enabled:
            return
        with self._lock:
            self._unchecked += rows
            self._since_analyze += rows
            if self._unchecked < CHECK_EVERY_ROWS:
                return
            self._unchecked = 0
            written = self._since_analyze
        try:
            with psycopg.connect(self._url, autocommit=True) as conn:
                if self._analyze_if_needed(conn, written):
                    with self._lock:
                        self._since_analyze -= written
        except psycopg.Error as exc:  # statistics are an optimisation: the write itself succeeded
            log.warning("could not refresh planner statistics after a bulk write: %s", type(exc).__name__)

    def _analyze_if_needed(self, conn: psycopg.Connection[Any], written: int) -> bool:
        row = conn.execute(_CHANGED).fetchone()
        changed, rows = (int(row[0] or 0), float(row[1] or 0)) if row else (0, 0.0)
        if not needs_analyze(max(changed, written), rows):
            return False
        for table in ANALYZED_TABLES:
            conn.execute(f"ANALYZE {table}")
        for table in VACUUMED_TABLES:
            conn.execute(f"VACUUM (ANALYZE) {table}")
        self.analyzed += 1
        return True
