"""With an LLM, the rolling summary is folded by a queued job that reads the episode log, never on the
conversation path: `add_message` makes no model call, and turns the buffer's cap dropped while the job
waited are summarized all the same. The LLM is the project's fake OpenAI-compatible HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory, Scope, namespaces
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.llm import OpenAICompatibleLLM
from memstrata.settings import Settings
from tests.llm.servers import API_KEY, FakeLLMServer, openai_server
from tests.support.clock import Clock

S1 = Scope("alice", session_id="s1")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with openai_server(api_key=API_KEY) as fake:
        yield fake


@pytest.fixture
def memory(tmp_path: Path, server: FakeLLMServer, clock: Clock) -> Iterator[Memory]:
    llm = OpenAICompatibleLLM(server.base_url, "fake-model", api_key=API_KEY, max_retries=0)
    with Memory(
        store=f"sqlite:///{tmp_path / 'fold.db'}",
        embedder=HashingEmbedder(64),
        llm=llm,
        clock=clock,
        settings=Settings(llm=None, buffer="memory://"),
    ) as built:
        yield built


def say(memory: Memory, *numbers: int) -> None:
    for n in numbers:
        memory.add_message("user" if n % 2 else "assistant", f"turn {n}", scope=S1)


def prompt(request: Any) -> str:
    return " ".join(str(m["content"]) for m in request.json["messages"])


def test_add_message_makes_no_model_call_and_queues_one_fold(memory: Memory, server: FakeLLMServer) -> None:
    say(memory, *range(1, 31))
    assert server.requests == []
    assert memory.session_summary(scope=S1) == ""
    jobs = [item.value for item in memory.store.list_items("alice", namespaces.QUEUE, limit=100)]
    # one fold for the session however long it waits (and the upkeep the turn policy queues at turn 20)
    assert sorted((job["kind"], job["status"]) for job in jobs) == [("fold", "pending"), ("maintain", "pending")]
    # the buffer keeps the window plus one chunk (and the last batch); older turns are only in the log
    assert [t.content for t in memory.recent_turns(100, scope=S1)][0] == "turn 12"


def test_the_queued_fold_summarizes_from_the_log_what_the_buffer_dropped(memory: Memory, server: FakeLLMServer) -> None:
    say(memory, *range(1, 31))
    server.script("Alice said turn 1 to turn 8.", "Alice said turn 1 to turn 16.", "Alice said turn 1 to turn 24.")
    assert memory.process_queue() == 2  # the fold, and the upkeep due at turn 20 (nothing old to compress)
    assert len(server.requests) == 3  # turns 1-8, 9-16, 17-24: 30 turns folded down to the window
    first = prompt(server.requests[0])
    assert "turn 1" in first and "turn 8" in first and "turn 9" not in first  # turn 1 was no longer buffered
    assert "Alice said turn 1 to turn 8." in prompt(server.requests[1])  # each fold carries the previous summary
    assert memory.session_summary(scope=S1) == "Alice said turn 1 to turn 24."
    assert [t.content for t in memory.recent_turns(100, scope=S1)] == [f"turn {n}" for n in range(25, 31)]
    assert memory.queue_status().counts == {"pending": 0, "done": 2, "failed": 0}


def test_the_next_overflow_queues_the_next_fold(memory: Memory, server: FakeLLMServer) -> None:
    say(memory, *range(1, 12))
    server.script("Alice said turn 1 to turn 8.")
    memory.process_queue()
    say(memory, *range(12, 20))  # 3 left + 8 = 11 > 10: the window overflows again
    assert len(server.requests) == 1
    server.script("Alice said turn 1 to turn 16.")
    assert memory.process_queue() == 1
    assert "Alice said turn 1 to turn 8." in prompt(server.requests[1])
    assert memory.session_summary(scope=S1) == "Alice said turn 1 to turn 16."


def test_a_failing_model_folds_extractively_in_the_job(memory: Memory, server: FakeLLMServer) -> None:
    say(memory, *range(1, 12))
    assert memory.process_queue() == 1  # nothing scripted: the server answers HTTP 500
    assert len(server.requests) == 1
    state = memory.store.get_item("alice", namespaces.SESSION, "s1")
    assert state is not None and state.value["folded"] == 8  # folded all the same, by the extractive fallback
    assert [t.content for t in memory.recent_turns(scope=S1)] == ["turn 9", "turn 10", "turn 11"]
    assert memory.queue_status().counts == {"pending": 0, "done": 1, "failed": 0}
