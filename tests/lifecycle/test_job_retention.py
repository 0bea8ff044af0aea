"""Finished background jobs are kept for a retention period; a lookup after it says `expired`, on every store."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from memstrata import Memory, NotFound, Scope
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.work_queue import EXPIRED, JOB_RETENTION, WorkQueue, new_job_id, queued_at
from memstrata.storage.base import Store
from tests.support.clock import T0, Clock


def _queue(store: Store, clock: Clock, retention: timedelta = JOB_RETENTION) -> tuple[WorkQueue, list[Any]]:
    ran: list[Any] = []
    queue = WorkQueue(store=store, clock=clock, run=lambda *job: ran.append(job[2]), retention=retention)
    return queue, ran


def test_done_jobs_beyond_the_newest_hundred_are_still_found(store: Store) -> None:
    clock = Clock()
    queue, _ = _queue(store, clock)
    ids = [queue.enqueue(Scope("u"), [{"role": "user", "content": str(i)}]) for i in range(150)]
    assert queue.process(limit=1_000) == 150
    clock.advance(days=6)
    queue.process()  # a later pass prunes, and the jobs are within the retention
    assert {queue.job("u", job_id).status for job_id in ids} == {"done"}
    assert queue.status(["u"]).counts["done"] == 150


def test_a_done_job_past_the_retention_is_deleted_and_looked_up_as_expired(store: Store) -> None:
    clock = Clock()
    queue, _ = _queue(store, clock, retention=timedelta(days=2))
    old = queue.enqueue(Scope("u"), [{"role": "user", "content": "hi"}])
    queue.process()
    clock.advance(days=3)
    recent = queue.enqueue(Scope("u"), [{"role": "user", "content": "again"}])
    queue.process()

    assert queue.job("u", old).status == EXPIRED
    assert queue.job("u", recent).status == "done"
    assert queue.status(["u"]).counts["done"] == 1
    with pytest.raises(NotFound, match="no queued job"):
        queue.job("u", new_job_id(clock()))  # never queued: not "expired"


def test_memory_job_status_follows_the_settings_retention(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_JOB_RETENTION_DAYS", "1")
    clock = Clock()
    memory = Memory(store=store, embedder=HashingEmbedder(64), clock=clock, track_access=False)
    job = memory.learn_later({"role": "user", "content": "I live in Porto."}, scope="u")
    memory.process_queue()
    assert memory.job_status(job, scope="u").status == "done"
    clock.advance(days=2)
    memory.process_queue()
    assert memory.job_status(job, scope="u").status == EXPIRED


def test_a_job_id_carries_the_time_it_was_queued() -> None:
    assert queued_at(new_job_id(T0)) == T0
    assert queued_at("0" * 32) is None  # an id of another form says nothing about its time
