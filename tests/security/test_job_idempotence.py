"""Every queued job is idempotent: run again after a crash, it changes nothing.

A worker killed after applying a job and before marking it done leaves the job pending, and the next
worker runs it again. For each job kind (learn, maintain, fold) on both stores: the job is applied and left
pending exactly as such a crash leaves it, then run again by the queue, and the user's whole export
(every memory, history event and item; times left out) must not change. A worst case too: the job
put back exactly as it was queued, as if none of its progress had been recorded. And a real
`kill -9` of a worker process in the middle of a queue of learn jobs, then a restarted worker: the
user ends with exactly what one clean run of the same jobs leaves.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memstrata import MemoryKind, NewMemory, Scope, namespaces
from memstrata.layers.work_queue import DONE, MAINTAIN, PENDING, JobProgress, job_scope
from memstrata.memory import Memory
from tests.security.conftest import Backend
from tests.support.clock import Clock

USER = "acme:crashed"
REFERENCE = "acme:reference"
ROOT = Path(__file__).resolve().parents[2]

KNOWN = "I live in Berlin. I love green tea. My sister Anna works at Globex. I work at Initech."
JOB = (
    "I moved to Paris last week. My manager is Bob. I love green tea. My sister Anna works at Globex. "
    "I no longer work at Initech."
)
"""A new value (supersedes Berlin), new facts and entities, two restatements and a retraction."""

TIMES = ("at", "first_seen", "last_seen", "exported_at")


def without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if not (k.endswith("_at") or k in TIMES)}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def state(memory: Memory, user: str = USER) -> dict[str, Any]:
    """The user's whole export without times; queue items (the job's own bookkeeping) apart."""
    document = without_times(json.loads(memory.export_user(scope=user).to_json()))
    document["items"] = [i for i in document["items"] if i["namespace"] != namespaces.QUEUE]
    return document


def job_item(memory: Memory, job_id: str, user: str = USER) -> dict[str, Any]:
    item = memory.store.get_item(user, namespaces.QUEUE, job_id)
    assert item is not None
    return item.value


def crash_after_applying(memory: Memory, job_id: str) -> None:
    """Apply the job's effects as the worker does, and stop before marking it done (a worker killed
    there): the job stays pending with whatever progress it recorded."""
    queue = memory._layers.queue
    item = memory.store.get_item(USER, namespaces.QUEUE, job_id)
    assert item is not None and item.value["status"] == PENDING
    scope = job_scope(USER, item.value["scope"])
    queue.run(item.value["kind"], scope, item.value["messages"], JobProgress(memory.store, item))


def test_a_learn_job_run_again_after_a_crash_changes_nothing(backend: Backend) -> None:
    with backend.memory(clock=Clock()) as memory:
        memory.learn(KNOWN, scope=USER)
        job_id = memory.learn_later(JOB, scope=USER)
        crash_after_applying(memory, job_id)
        applied = state(memory)
        assert any("Paris" in m["content"] for m in applied["memories"])
        assert memory.process_queue() == 1
        assert job_item(memory, job_id)["status"] == DONE
        assert state(memory) == applied


def test_a_re_run_applies_the_recorded_plan_even_when_the_model_would_answer_otherwise(backend: Backend) -> None:
    """With an LLM extractor, a re-run does not ask the model again: it applies the candidates the job
    recorded before writing (a model may answer differently the second time)."""
    from tests.llm.servers import client_for, completion, openai_server
    from tests.security.test_erasure_fence import fact_answer

    with openai_server() as server, client_for(server, max_retries=0) as llm:
        server.script(completion(fact_answer("Paris")), completion(fact_answer("Rome")))
        with backend.memory(llm=llm, clock=Clock()) as memory:
            job_id = memory.learn_later("I moved last week.", scope=USER)
            crash_after_applying(memory, job_id)
            applied = state(memory)
            assert memory.process_queue() == 1
            assert state(memory) == applied
            assert len(server.requests) == 1
            assert [m["content"] for m in applied["memories"]] == ["The user lives in Paris."]


def test_a_plan_entry_reads_back_as_the_same_candidate() -> None:
    from datetime import UTC, datetime

    from memstrata.extraction.base import Candidate, EntityMention, ProfileSlot
    from memstrata.layers.learning import candidate_of, plan_entry

    candidates = [
        Candidate(
            MemoryKind.EVENT,
            "The user flew to Oslo.",
            "event",
            attribute="event",
            value="Oslo",
            event_time=datetime(2026, 3, 1, 9, tzinfo=UTC),
            entities=(EntityMention("Oslo", "place"),),
            confidence=0.7,
            source_text="I flew to Oslo",
        ),
        Candidate(
            MemoryKind.FACT,
            "The user lives in Paris.",
            "identity",
            attribute="location",
            value="Paris",
            profile=ProfileSlot("identity", "location", "Paris"),
            polarity=-1,
        ),
        Candidate(MemoryKind.PROCEDURE, "Answer in French.", "instruction"),
    ]
    entries = json.loads(json.dumps([plan_entry(c) for c in candidates]))  # as the queue item stores them
    assert [candidate_of(e) for e in entries] == candidates


def test_a_learn_job_whose_progress_was_lost_changes_nothing_but_access_counts(backend: Backend) -> None:
    """Worst case: the job put back as it was queued, none of its progress recorded. Its memories are
    found by their step ids, entity links and profile facts are upserts; only the access count of a
    memory the job restated is counted again."""
    with backend.memory(clock=Clock()) as memory:
        memory.learn(KNOWN, scope=USER)
        job_id = memory.learn_later(JOB, scope=USER)
        queued = job_item(memory, job_id)
        assert memory.process_queue() == 1
        once = state(memory)
        memory.store.put_item(USER, namespaces.QUEUE, job_id, queued)
        assert memory.process_queue() == 1
        twice = state(memory)
        for document in (once, twice):
            for record in document["memories"]:
                record.pop("access_count")
        assert twice == once
        assert len([m for m in twice["memories"] if "Paris" in m["content"]]) == 1


def test_a_maintain_job_run_again_after_a_crash_changes_nothing(backend: Backend) -> None:
    clock = Clock()
    with backend.memory(clock=clock) as memory:
        old = [NewMemory(f"Went hiking on trail {i} with Dana{i}", kind=MemoryKind.EVENT) for i in range(12)]
        memory.add_many(old, scope=USER, dedupe=False)
        clock.advance(days=45)
        job_id = memory._layers.queue.enqueue(Scope(USER), kind=MAINTAIN)
        crash_after_applying(memory, job_id)
        applied = state(memory)
        assert [m for m in applied["memories"] if m["kind"] == "summary"]
        memory.add_many(old[:1], scope=USER, dedupe=False)  # more work after the crash: not the job's
        applied = state(memory)
        assert memory.process_queue() == 1
        assert job_item(memory, job_id)["status"] == DONE
        assert state(memory) == applied


def test_a_fold_job_run_again_after_a_crash_changes_nothing(backend: Backend) -> None:
    """The session's summary fold (queued when an LLM summarizes): its progress is the session state,
    saved with each folded chunk, so a re-run finds nothing left to fold and asks the model nothing."""
    from tests.llm.servers import client_for, completion, openai_server

    with openai_server() as server, client_for(server, max_retries=0) as llm:
        server.script(*[completion(f"The user talked about topic {i}.") for i in range(4)])
        with backend.memory(llm=llm, clock=Clock()) as memory:
            session = Scope(USER, session_id="s1")
            for i in range(19):  # past the window (10), short of the turn policy's upkeep (20)
                memory.add_message("user", f"Turn {i} about topic {i}.", scope=session)
            [job] = [i for i in memory.store.list_items(USER, namespaces.QUEUE) if i.value["kind"] == "fold"]
            crash_after_applying(memory, job.key)
            applied = state(memory)
            asked = len(server.requests)
            assert asked >= 1 and memory.session_summary(scope=session)
            assert memory.process_queue() == 1
            assert job_item(memory, job.key)["status"] == DONE
            assert state(memory) == applied and len(server.requests) == asked


# -- kill -9 ------------------------------------------------------------------------------------------


def name(n: int) -> str:
    """A made-up proper name for each number ("Fababa")."""
    letters = ""
    for _ in range(3):
        letters += "bcdfghjklmnprstvz"[n % 17] + "aeiou"[n // 17 % 5]
        n //= 85
    return letters.capitalize()


JOBS = [
    f"I moved to {name(i)}ville. My manager is {name(i % 3 + 400)}. "
    + " ".join(
        f"My colleague {name(100 * i + j)} works at {name(j % 4 + 900)} Corp. I love {name(j + 50).lower()} tea."
        for j in range(8)
    )
    for i in range(2)
]
"""Two jobs of 26 steps each (moves that supersede, colleagues and employers, restated likes)."""


def comparable(memory: Memory, user: str) -> dict[str, Any]:
    """What the user ends with, independent of ids: memories (with what superseded them), entities
    (mentions, linked memories) and profile facts."""
    document = json.loads(memory.export_user(scope=user).to_json())
    content = {m["id"]: m["content"] for m in document["memories"]}
    memories = sorted(
        (m["content"], m["kind"], m["valid_to"] is None, content.get(m["superseded_by"] or "", ""))
        for m in document["memories"]
    )
    items: dict[str, list[Any]] = {}
    for item in document["items"]:
        value = item["value"]
        if item["namespace"] == namespaces.ENTITY:
            linked = sorted(content.get(i, "?") for i in value["memory_ids"])
            items.setdefault("entities", []).append((value["name"], value["mention_count"], linked))
        elif item["namespace"] == namespaces.PROFILE:
            items.setdefault("profile", []).append(
                (item["key"], value["value"], [p["value"] for p in value["previous"]])
            )
    return {"memories": memories, **{k: sorted(v) for k, v in items.items()}}


def interrupted(memory: Memory, user: str) -> int:
    """Pending jobs a killed worker had applied some of (a re-run without idempotence repeats those)."""
    items = memory.store.list_items(user, namespaces.QUEUE, limit=10_000)
    return sum(1 for i in items if i.value["status"] == PENDING and i.value.get("applied", 0) >= 1)


def kill_a_worker_mid_queue(backend: Backend, rng: random.Random) -> None:
    command = [sys.executable, "-m", "tests.security.queue_worker", backend.url]
    worker = subprocess.Popen(
        command + [backend.owner_url] * bool(backend.owner_url), stdout=subprocess.PIPE, cwd=ROOT, text=True
    )
    assert worker.stdout is not None
    with worker.stdout:
        assert worker.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))  # the worker's writes are slowed: a job takes about a second
        worker.send_signal(signal.SIGKILL)
    assert worker.wait(30) in (0, -signal.SIGKILL)  # 0: it finished first; the loop kills another


def test_a_worker_killed_mid_job_and_restarted_leaves_what_one_clean_run_leaves(backend: Backend) -> None:
    rng = random.Random(15)
    with backend.memory() as memory:
        for text in JOBS:
            memory.learn_later(text, scope=REFERENCE)
        memory.process_queue(limit=1_000)
        for text in JOBS:
            memory.learn_later(text, scope=USER)
        kills = cut = 0
        while kills < 12 and (kills < 2 or cut == 0):  # at least one kill between two steps of a job
            kill_a_worker_mid_queue(backend, rng)
            kills += 1
            cut += interrupted(memory, USER)
        print(f"{kills} kills, {cut} inside a job")
        assert cut >= 1 and memory.queue_status(users=[USER]).counts[PENDING] > 0
        while memory.process_queue(limit=1_000):
            pass
        assert memory.queue_status(users=[USER]).counts == {PENDING: 0, DONE: len(JOBS), "failed": 0}
        assert comparable(memory, USER) == comparable(memory, REFERENCE)
