"""Access bookkeeping off the search path: which memories a search returned, and when.

Every search updates the access count and last access time of its hits (time-weighted ranking reads
them). On PostgreSQL that UPDATE is the costliest part of a search for a small user (a first update of a
wide row is rarely HOT, so every index is rewritten: ~4 ms, measured in BENCHMARKS.md), and a caller
waiting for its search results does not need it. `AccessRecorder` hands the write to one background
thread; writes are applied in order, one `Store.record_access` per search.

Consistency: `flush()` waits for every recorded access to be written. `SemanticMemory.get`,
`Memory.list`, export, erasure and `Memory.close` flush, so a process reads its own access updates;
another process may read a count a few milliseconds old. A failed write is logged and counted
(`failures`), never raised into a search: access statistics are bookkeeping, not user data.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from datetime import datetime

from ..errors import MemstrataError
from ..storage.base import Store

log = logging.getLogger(__name__)

MAX_PENDING = 10_000
"""Searches whose access write may wait; beyond this, `record` blocks (back-pressure, nothing dropped)."""

_Access = tuple[str, tuple[str, ...], datetime]


class AccessRecorder:
    def __init__(self, store: Store, *, max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self.failures = 0
        self._pending: queue.Queue[_Access | None] = queue.Queue(maxsize=max_pending)
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False

    def record(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Count one access of each memory in `ids` at `at` (written in the background)."""
        if not ids:
            return
        access = (user_id, tuple(ids), at)
        with self._start_lock:  # so nothing is queued behind close()'s stop signal
            if not self._closed:
                self._ensure_worker()
                self._pending.put(access)
                return
        self._write(access)

    def flush(self) -> None:
        """Return once every access recorded so far is written (at once when none is pending)."""
        if self._pending.unfinished_tasks:
            self._pending.join()

    def close(self) -> None:
        """Write what is pending and stop the thread; later accesses are written synchronously."""
        with self._start_lock:
            self._closed = True
            worker = self._worker
        if worker is not None:
            self._pending.put(None)
            worker.join()

    def _ensure_worker(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._run, name="memstrata-access", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        while True:
            access = self._pending.get()
            try:
                if access is None:
                    return
                self._write(access)
            finally:
                self._pending.task_done()

    def _write(self, access: _Access) -> None:
        user_id, ids, at = access
        try:
            self.store.record_access(user_id, ids, at)
        except MemstrataError as exc:
            self.failures += 1
            log.warning("could not record the access of %d memories of user %r: %s", len(ids), user_id, exc)
