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
itself is logged and kept in `last_error`). A done job's record is kept for `retention` (default
`JOB_RETENTION`, 7 days; `MEMSTRATA_JOB_RETENTION_DAYS`) after it finished, then deleted; failed jobs
stay until someone looks at them. A job id starts with the time it was queued (`job_id`), so a lookup
of an id older than the retention that finds no record answers `expired` (`job`) instead of nothing.

Every job is idempotent: a re-run (the worker killed after applying a job, before marking it done)
changes nothing. A job keeps its progress on its own item (`JobProgress`): the plan it decided on
before writing (a learn's extracted candidates, so a re-run applies the same ones even when an LLM
would answer differently) and how many of its steps are applied. Each step stores its memory under
an id derived from the job id and the step's index, in the same transaction as the rest of the step,
so a step applied just before a crash is found by that id even when its progress mark was not
written yet; entity links and profile facts it then re-applies are upserts. A maintain job records
its id in the user's consolidation state and runs at most once.

A job is authorized when it runs, not when it was queued: it always runs as the user that owns its
item, never as a user its payload names. A payload that names another user, or an agent of another
tenant, fails without running (an imported or hand-written document cannot make the worker write
into someone else's memory).
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .. import namespaces
from ..errors import InvalidInput, MemstrataError, NotFound, PermissionDenied, UserErased
from ..models import Scope, owner_prefix, validate_id
from ..storage.base import Item, Store
from ..storage.fence import fence
from .semantic import Clock

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
JOB_RETENTION = timedelta(days=7)
"""How long a done job's record is kept after it finished (for `job` and `status()`), by default."""
ALL = 1_000_000_000
PENDING, DONE, FAILED = "pending", "done", "failed"
EXPIRED = "expired"
"""What `job` answers for a job queued longer ago than the retention whose record is gone."""
_JOB_ID = re.compile(r"^j([0-9a-f]{12})[0-9a-f]{19}$")

LEARN, MAINTAIN = "learn", "maintain"
"""Job kinds: learn from the job's messages; run the user's due upkeep (no messages)."""

_STEP_IDS = uuid.UUID("6b1f5a52-2f0c-4c55-9a3e-7f1d0c4e8a15")
"""The uuid5 namespace of the memory ids a queued job's steps are stored under."""


class JobProgress:
    """How far one queued job got, kept on its queue item so that a re-run resumes where the last
    run stopped instead of repeating it (see the module doc)."""

    def __init__(self, store: Store, item: Item) -> None:
        self.store = store
        self.user_id = item.user_id
        self.job_id = item.key
        self.value = dict(item.value)

    def step_id(self, index: int) -> str:
        """The memory id of the job's step `index`: the same in every run of this job."""
        return uuid.uuid5(_STEP_IDS, f"{self.user_id}\x1f{self.job_id}\x1f{index}").hex

    def planned(self, plan: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """The plan an earlier run recorded, else `plan()`, recorded before any step is applied."""
        recorded = self.value.get("plan")
        if isinstance(recorded, list):
            return recorded
        made = plan()
        self._save(plan=made)
        return made

    def applied(self, index: int) -> bool:
        return index < int(self.value.get("applied", 0))

    def mark_applied(self, index: int) -> None:
        self._save(applied=index + 1)

    def _save(self, **changes: Any) -> None:
        self.value |= changes
        self.store.put_item(self.user_id, namespaces.QUEUE, self.job_id, self.value)


Job = Callable[[str, Scope, list[dict[str, Any]], JobProgress], None]
"""Runs one job: (kind, scope, messages, its progress)."""


@dataclass(frozen=True, slots=True)
class QueueStatus:
    counts: dict[str, int]
    failures: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class JobStatus:
    """One queued job as `WorkQueue.job` finds it: `pending`, `done`, `failed`, or `expired` (its record
    was deleted after the retention; nothing else is known about it then)."""

    id: str
    status: str
    attempts: int = 0
    error: str | None = None
    created_at: str | None = None
    finished_at: str | None = None


def new_job_id(at: datetime) -> str:
    """A job id: "j", the queue time in milliseconds (12 hex digits), then 19 random hex digits."""
    return f"j{int(at.timestamp() * 1000):012x}{secrets.token_hex(10)[:19]}"


def queued_at(job_id: str) -> datetime | None:
    """When the job of `job_id` was queued, read from the id (None for an id of another form)."""
    match = _JOB_ID.match(job_id)
    return datetime.fromtimestamp(int(match.group(1), 16) / 1000, tz=UTC) if match else None


def status_of_missing(job_id: str, now: datetime, retention: timedelta) -> str | None:
    """What a lookup answers for a job without a record: `expired` when it was queued before the
    retention (a done job queued then may have been deleted), else None (no such job)."""
    at = queued_at(job_id)
    return EXPIRED if at is not None and at < now - retention else None


class WorkQueue:
    def __init__(self, *, store: Store, clock: Clock, run: Job, retention: timedelta = JOB_RETENTION) -> None:
        if retention < timedelta(0):
            raise InvalidInput(f"the job retention must not be negative, got {retention}")
        self.store = store
        self.clock = clock
        self.run = run
        self.retention = retention
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None
        """The last failure of the worker loop itself (not of a job), for operators."""

    def enqueue(self, scope: Scope, messages: Sequence[dict[str, Any]] = (), *, kind: str = LEARN) -> str:
        job_id = new_job_id(self.clock())
        self.store.put_item(
            scope.user_id,
            namespaces.QUEUE,
            job_id,
            {
                "id": job_id,
                "kind": kind,
                "status": PENDING,
                "attempts": 0,
                "error": None,
                "scope": {"user_id": scope.user_id, "agent_id": scope.agent_id, "session_id": scope.session_id},
                "messages": list(messages),
                "created_at": self.clock().isoformat(),
                "finished_at": None,
            },
        )
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
        progress = JobProgress(self.store, item)
        try:
            scope = job_scope(item.user_id, item.value.get("scope"))
            self.run(item.value.get("kind", LEARN), scope, item.value["messages"], progress)
        except UserErased:
            raise
        except PermissionDenied as exc:
            job = progress.value | {
                "status": FAILED,
                "attempts": progress.value.get("attempts", 0) + 1,
                "error": f"refused: {exc}",
                "finished_at": self.clock().isoformat(),
            }
            job = _without_text(job)
        except Exception as exc:  # noqa: BLE001 - any failure of a job is recorded on it, never fatal
            job = progress.value | {
                "attempts": int(progress.value.get("attempts", 0)) + 1,
                "error": f"{type(exc).__name__}: {exc}",
            }
            if job["attempts"] >= MAX_ATTEMPTS:
                job |= {"status": FAILED, "finished_at": self.clock().isoformat()}
        else:
            job = _without_text(
                progress.value | {"status": DONE, "error": None, "finished_at": self.clock().isoformat()}
            )
        self.store.put_item(item.user_id, namespaces.QUEUE, item.key, job)

    def _prune(self, user_id: str) -> None:
        """Delete the user's done jobs that finished longer ago than the retention."""
        cutoff = (self.clock() - self.retention).isoformat()
        for item in self.store.list_items(user_id, namespaces.QUEUE, limit=ALL):
            finished = item.value.get("finished_at")
            if item.value.get("status") == DONE and isinstance(finished, str) and finished < cutoff:
                self.store.delete_item(user_id, namespaces.QUEUE, item.key)

    def job(self, user_id: str, job_id: str) -> JobStatus:
        """The user's job `job_id`: its record, or `expired` when it was queued before the retention and
        its record is gone; `NotFound` when the user never had such a job."""
        item = self.store.get_item(user_id, namespaces.QUEUE, validate_id(job_id, "job_id"))
        if item is None:
            if (missing := status_of_missing(job_id, self.clock(), self.retention)) is None:
                raise NotFound(f"no queued job {job_id!r} for user {user_id!r}")
            return JobStatus(job_id, missing)
        job = item.value
        return JobStatus(
            job_id,
            str(job.get("status")),
            int(job.get("attempts") or 0),
            job.get("error"),
            job.get("created_at"),
            job.get("finished_at"),
        )

    def status(self, user_ids: Sequence[str] | None = None) -> QueueStatus:
        counts: Counter[str] = Counter({PENDING: 0, DONE: 0, FAILED: 0})
        failures = []
        for user_id in user_ids if user_ids is not None else self.store.user_ids(limit=ALL):
            for item in self.store.list_items(user_id, namespaces.QUEUE, limit=ALL):
                counts[item.value["status"]] += 1
                if item.value["status"] == FAILED or item.value.get("error"):
                    failures.append(
                        {k: item.value[k] for k in ("id", "status", "attempts", "error", "created_at")}
                        | {"user_id": user_id}
                    )
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


def _without_text(job: dict[str, Any]) -> dict[str, Any]:
    """A finished job keeps no text of the user: its messages and its plan are dropped."""
    return {k: v for k, v in job.items() if k != "plan"} | {"messages": []}


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
