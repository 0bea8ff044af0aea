"""A durable background queue for slow work, kept in the store: learning from messages (extraction,
with an LLM a model call) and a user's periodic upkeep (consolidation every N turns), so the
conversation path does constant work.

Each queued job is an item of the user's QUEUE namespace, so it lives (and is erased) with the
user's data. A job is `pending` until a worker runs it, then `done` (its message text is dropped)
or `failed` (after MAX_ATTEMPTS, with the error kept and visible in `status()`); nothing is dropped
silently. Workers pick jobs up from the users that have any (`Store.user_ids`), so a restarted
process resumes what an earlier one left pending.

Each user's jobs run inside a write fence (storage/fence.py) taken before they are read: when the
user is erased while their jobs run, the job in flight writes nothing and no further job runs. Any
exception of a job is recorded on it (nothing kills the worker thread, and a failure of the worker
itself is logged and kept in `last_error`); done jobs beyond the newest `KEEP_DONE` of a user are
pruned.

A job is authorized when it runs, not when it was queued: it always runs as the user that owns its
item, never as a user its payload names. A payload that names another user, or an agent of another
tenant, fails without running (an imported or hand-written document cannot make the worker write
into someone else's memory).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import namespaces
from ..errors import MemstrataError, PermissionDenied, UserErased
from ..models import Scope, new_id, owner_prefix
from ..storage.base import Item, Store
from ..storage.fence import fence
from .semantic import Clock

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
KEEP_DONE = 100
"""Done jobs kept per user (the newest), for `status()`; older ones are deleted."""
ALL = 1_000_000_000
PENDING, DONE, FAILED = "pending", "done", "failed"

LEARN, MAINTAIN = "learn", "maintain"
"""Job kinds: learn from the job's messages; run the user's due upkeep (no messages)."""

Job = Callable[[str, Scope, list[dict[str, Any]]], None]
"""Runs one job: (kind, scope, messages)."""


@dataclass(frozen=True, slots=True)
class QueueStatus:
    counts: dict[str, int]
    failures: list[dict[str, Any]]


class WorkQueue:
    def __init__(self, *, store: Store, clock: Clock, run: Job) -> None:
        self.store = store
        self.clock = clock
        self.run = run
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None
        """The last failure of the worker loop itself (not of a job), for operators."""

    def enqueue(self, scope: Scope, messages: Sequence[dict[str, Any]] = (), *, kind: str = LEARN) -> str:
        job_id = new_id()
        self.store.put_item(scope.user_id, namespaces.QUEUE, job_id, {
            "id": job_id, "kind": kind, "status": PENDING, "attempts": 0, "error": None,
            "scope": {"user_id": scope.user_id, "agent_id": scope.agent_id, "session_id": scope.session_id},
            "messages": list(messages), "created_at": self.clock().isoformat(), "finished_at": None,
        })  # fmt: skip
        return job_id

    def process(self, *, limit: int = 100, user_ids: Sequence[str] | None = None) -> int:
        """Run up to `limit` pending jobs now; return how many ran (succeeded or failed)."""
        ran = 0
        with self._lock:
            for user_id in user_ids if user_ids is not None else self.store.user_ids(limit=ALL):
                if ran >= limit:
                    break
                ran += self._process_user(user_id, limit - ran)
        return ran

    def _process_user(self, user_id: str, limit: int) -> int:
        """Run up to `limit` of the user's pending jobs, oldest first, inside the user's write fence."""
        ran = 0
        try:
            with fence(self.store, user_id):
                items = self.store.list_items(user_id, namespaces.QUEUE, limit=ALL)
                pending = sorted((i for i in items if i.value.get("status") == PENDING), key=_created)
                for item in pending[:limit]:
                    self._run_one(item)
                    ran += 1
                self._prune(user_id)
        except UserErased:
            log.info("a user was erased while their queued jobs ran; the rest of them will not run")
        return ran

    def _run_one(self, item: Item) -> None:
        job = dict(item.value)
        try:
            self.run(job.get("kind", LEARN), job_scope(item.user_id, job.get("scope")), job["messages"])
        except UserErased:
            raise
        except PermissionDenied as exc:
            job |= {"status": FAILED, "attempts": job.get("attempts", 0) + 1, "messages": [],
                    "error": f"refused: {exc}", "finished_at": self.clock().isoformat()}  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - any failure of a job is recorded on it, never fatal
            job["attempts"] = int(job.get("attempts", 0)) + 1
            job["error"] = f"{type(exc).__name__}: {exc}"
            if job["attempts"] >= MAX_ATTEMPTS:
                job |= {"status": FAILED, "finished_at": self.clock().isoformat()}
        else:
            job |= {"status": DONE, "messages": [], "error": None, "finished_at": self.clock().isoformat()}
        self.store.put_item(item.user_id, namespaces.QUEUE, item.key, job)

    def _prune(self, user_id: str) -> None:
        """Delete the user's done jobs beyond the newest `KEEP_DONE`."""
        done = [i for i in self.store.list_items(user_id, namespaces.QUEUE, limit=ALL) if i.value.get("status") == DONE]
        for item in done[KEEP_DONE:]:
            self.store.delete_item(user_id, namespaces.QUEUE, item.key)

    def status(self, user_ids: Sequence[str] | None = None) -> QueueStatus:
        counts: Counter[str] = Counter({PENDING: 0, DONE: 0, FAILED: 0})
        failures = []
        for user_id in user_ids if user_ids is not None else self.store.user_ids(limit=ALL):
            for item in self.store.list_items(user_id, namespaces.QUEUE, limit=ALL):
                counts[item.value["status"]] += 1
                if item.value["status"] == FAILED or item.value.get("error"):
                    failures.append({k: item.value[k] for k in ("id", "status", "attempts", "error", "created_at")}
                                    | {"user_id": user_id})  # fmt: skip
        return QueueStatus(dict(counts), failures)

    # -- background worker ----------------------------------------------------
    def start(self, *, interval: float = 1.0) -> None:
        """Process pending jobs every `interval` seconds in a daemon thread until `stop()`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(interval,), name="memstrata-queue", daemon=True)
        self._thread.start()

    def _loop(self, interval: float) -> None:
        while not self._stop.is_set():
            try:
                self.process()
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - the worker outlives any failure (a store outage...)
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("background queue pass failed; retrying in %s s", interval)
            self._stop.wait(interval)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


def _created(item: Item) -> str:
    return str(item.value.get("created_at") or "")


def job_scope(owner: str, recorded: object) -> Scope:
    """The scope a queued job runs in: its item's owner, with the agent and session it recorded.

    Raises `PermissionDenied` when the recorded scope names another user, or an agent outside the
    owner's tenant (the part of an id before its first ':'), so a job can only ever write as its owner.
    """
    if not isinstance(recorded, dict):
        raise PermissionDenied(f"queued job of {owner!r} has no scope")
    if recorded.get("user_id") != owner:
        raise PermissionDenied(f"queued job names user {recorded.get('user_id')!r} but belongs to {owner!r}")
    agent_id = recorded.get("agent_id")
    if agent_id is not None and owner_prefix(str(agent_id)) != owner_prefix(owner):
        raise PermissionDenied(f"queued job of {owner!r} names agent {agent_id!r} of another tenant")
    try:
        return Scope(owner, agent_id=agent_id, session_id=recorded.get("session_id"))
    except MemstrataError as exc:
        raise PermissionDenied(f"queued job of {owner!r} has an invalid scope: {exc}") from exc
