"""Erasure is a fence: after the receipt, nothing that started before it writes again.

Races provoked on purpose, with a real LLM endpoint (a local HTTP server speaking the OpenAI protocol)
that holds its answer until the erasure is done: the background worker in the middle of a user's
queued jobs, and a background session end. And the in-process buffer of one process after an erasure
made by another. After each, the marker string is nowhere: not in the API, not in the SQLite file
bytes (with -wal/-shm), not in a `pg_dump`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memstrata import SearchFilter
from memstrata.errors import UserErased
from memstrata.layers.work_queue import WorkQueue
from memstrata.memory import Memory
from memstrata.models import Scope, utcnow
from memstrata.storage.fence import fence
from tests.llm.servers import RecordedRequest, Reply, client_for, completion, openai_server
from tests.security.conftest import Backend

MARKER = "Zqxmarkerville"
USER = "acme:erased"
OTHER = "acme:kept"


def fact_answer(city: str) -> str:
    fact = {
        "kind": "fact",
        "category": "identity",
        "content": f"The user lives in {city}.",
        "subject": "user",
        "attribute": "location",
        "value": city,
        "entities": [{"name": city, "type": "place"}],
        "profile": {"category": "identity", "key": "location", "value": city},
        "source": 0,
        "confidence": 0.9,
    }
    return json.dumps({"facts": [fact]})


class Gate:
    """A script entry that signals when the model is called and answers only once released."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        self.entered.set()
        self.release.wait(20)
        return completion(self.answer)


@contextmanager
def llm_memory(backend: Backend, *script: Callable[[RecordedRequest], Reply] | Reply) -> Iterator[Memory]:
    with openai_server() as server, client_for(server, max_retries=0) as llm:
        server.script(*script)
        with backend.memory(llm=llm) as memory:
            yield memory


def assert_gone(backend: Backend, memory: Memory, marker: str = MARKER) -> None:
    kept = memory.list(scope=USER, limit=1000, filters=SearchFilter(include_superseded=True, include_expired=True))
    assert not [r for r in kept if marker in r.content + (r.context or "")]
    assert marker not in memory.export_user(scope=USER).to_json()
    assert memory.entities(scope=USER) == [] and memory.facts(scope=USER) == []
    assert backend.traces(marker) == 0


def test_erase_while_the_worker_runs_the_users_jobs(backend: Backend) -> None:
    gate = Gate(fact_answer(MARKER))
    # after the erasure only the other user's job may reach the model: the erased user's rest never runs
    with llm_memory(backend, gate, completion(fact_answer("Oslo"))) as memory:
        for i in range(4):
            memory.learn_later(f"I moved to {MARKER}{i}.", scope=USER)
        memory.learn_later("I live in Oslo.", scope=OTHER)
        worker = threading.Thread(target=memory.process_queue)
        worker.start()
        assert gate.entered.wait(10)
        receipt = memory.erase_user(scope=USER)
        gate.release.set()
        worker.join(20)
        assert not worker.is_alive()
        assert receipt.counts["queue"] == 4
        assert_gone(backend, memory)
        assert memory.store.list_items(USER, "queue") == []
        assert [r.content for r in memory.list(scope=OTHER)] == ["The user lives in Oslo."]


def test_erase_during_a_background_session_end(backend: Backend) -> None:
    update = {
        "facts_add": [f"The user lives in {MARKER}."],
        "preferences_set": {},
        "last_topics": [MARKER],
        "open_items_add": [f"visit {MARKER}"],
        "open_items_done": [],
    }
    gate = Gate(json.dumps(update))
    with llm_memory(backend, *[gate] * 4) as memory:
        scope = Scope(USER, session_id="s1")
        memory.add_message("user", f"I just moved to {MARKER}.", scope=scope)
        memory.add_message("assistant", "Noted.", scope=scope)
        future = memory.end_session(scope=scope, background=True)
        assert gate.entered.wait(10)
        memory.erase_user(scope=USER)
        gate.release.set()
        assert isinstance(future.exception(20), UserErased)
        assert MARKER not in json.dumps(memory.user_context(scope=USER))
        assert_gone(backend, memory)


def test_a_fenced_write_after_an_erasure_in_another_connection_is_refused(backend: Backend) -> None:
    with backend.memory() as first, backend.memory() as second:
        first.add(f"The user lives in {MARKER}.", scope=USER)
        with fence(first.store, USER):
            second.erase_user(scope=USER)
            with pytest.raises(UserErased):
                first.add(f"The user still lives in {MARKER}.", scope=USER)
            with pytest.raises(UserErased):
                first.store.put_item(USER, "profile", "identity:location", {"value": MARKER})
        first.add("A new user of the same id starts clean.", scope=USER)  # work begun after the erasure
        assert [r.content for r in second.list(scope=USER)] == ["A new user of the same id starts clean."]
        assert backend.traces(MARKER) == 0


def test_another_process_erasure_empties_this_process_buffer(backend: Backend) -> None:
    """`memstrata erase` run elsewhere while a server holds the user's turns in its in-process buffer."""
    with backend.memory(buffer="memory://") as server, backend.memory(buffer="memory://") as cli:
        scope = Scope(USER, session_id="s1")
        for i in range(6):
            server.add_message("user", f"turn {i} about {MARKER}", scope=scope)
        assert len(server.recent_turns(scope=scope)) == 6
        cli.erase_user(scope=USER)
        assert server.recent_turns(scope=scope) == []
        assert MARKER not in server.context(scope=scope).text
        for i in range(12):  # enough to fold: the erased turns must not come back in a summary
            server.add_message("user", f"fresh turn {i}", scope=scope)
        assert MARKER not in server.session_summary(scope=scope)
        assert_gone(backend, server)


def test_nested_fences_keep_the_outer_generation(backend: Backend) -> None:
    with backend.memory() as memory:
        store = memory.store
        with fence(store, USER) as outer:
            store.erase_user(USER)
            with fence(store, USER) as inner:
                assert inner == outer
                with pytest.raises(UserErased):
                    store.put_item(USER, "profile", "k", {"v": 1})
        assert store.get_item(USER, "profile", "k") is None


def test_worker_survives_any_exception_and_records_it(backend: Backend) -> None:
    calls: list[Any] = []

    def run(kind: str, scope: Scope, messages: list[dict[str, Any]], progress: Any) -> None:
        calls.append(scope)
        raise ZeroDivisionError("a bug in a job")

    with backend.memory() as memory:
        queue = WorkQueue(store=memory.store, clock=memory.clock, run=run)
        queue.enqueue(Scope(USER), [{"role": "user", "content": "hi"}])
        queue.start(interval=0.05)
        try:
            for _ in range(200):
                if queue.status([USER]).counts["failed"] == 1:
                    break
                threading.Event().wait(0.05)
        finally:
            queue.stop()
        status = queue.status([USER])
        assert status.counts == {"pending": 0, "done": 0, "failed": 1}
        assert "ZeroDivisionError" in status.failures[0]["error"] and len(calls) == 3


def test_no_stall_past_a_thousand_jobs(tmp_path: Any) -> None:
    from memstrata.storage.sqlite import SQLiteStore

    ran: list[str] = []
    store = SQLiteStore(tmp_path / "q.db")
    try:
        queue = WorkQueue(
            store=store, clock=utcnow, run=lambda kind, scope, messages, progress: ran.append(messages[0]["content"])
        )
        for i in range(1_200):
            queue.enqueue(Scope(USER), [{"role": "user", "content": str(i)}])
        assert queue.process(limit=700) == 700
        assert queue.process(limit=10_000) == 500
        assert ran == [str(i) for i in range(1_200)]  # oldest first, none left behind
        status = queue.status([USER])
        assert status.counts == {"pending": 0, "done": 1_200, "failed": 0}  # kept for the retention
    finally:
        store.close()
