"""Consolidation with an LLM over the real local protocol servers, on SQLite and PostgreSQL: nothing is
retired unless its replacement is whole, and a run that fails part-way says exactly what it did."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from memstrata import ConsolidationIncomplete, EventType, Memory, MemoryKind, NewMemory, Scope, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.lifecycle import LifecyclePolicy
from memstrata.settings import Settings
from tests.lifecycle.conftest import T0, Backend, Clock
from tests.llm.servers import (
    API_KEY,
    FakeLLMServer,
    anthropic_server,
    client_for,
    error,
    openai_server,
    truncated,
    with_chatter,
)

USER = "alice"
ANSWER = "Alice went hiking on twelve trails with her friends."


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    """A running protocol server of each kind."""
    factory = openai_server if request.param == "openai" else anthropic_server
    with factory(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def openai_fake() -> Iterator[FakeLLMServer]:
    with openai_server(api_key=API_KEY) as server:
        yield server


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def open_memory(
    request: pytest.FixtureRequest, backends: Callable[[str], Backend], clock: Clock
) -> Iterator[Callable[..., Memory]]:
    """`open_memory(server, **policy)`: a Memory on a fresh store of the backend, consolidating in groups
    of at most 12 with the LLM behind `server`."""
    opened: list[Memory] = []

    def make(server: FakeLLMServer, **policy: Any) -> Memory:
        memory = Memory(
            store=backends(request.param).store,
            embedder=HashingEmbedder(64),
            clock=clock,
            track_access=False,
            llm=client_for(server, max_retries=0),
            policy=LifecyclePolicy(consolidate_max_group=12, **policy),
            settings=Settings(buffer="memory://", window_size=40, summary_threshold=8),
        )
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


def old_events(memory: Memory, count: int) -> list[Any]:
    items = [
        NewMemory(
            f"Alice went hiking on trail number {i} with her friend Dana{i}",
            kind=MemoryKind.EVENT,
            created_at=T0 - timedelta(days=45) + timedelta(hours=i),
        )
        for i in range(count)
    ]
    return memory.add_many(items, scope=USER, dedupe=False)


def current_ids(memory: Memory) -> set[str]:
    return {r.id for r in memory.list(scope=USER, limit=100)}


def untouched(memory: Memory, originals: list[Any]) -> bool:
    """Every original current, unchanged, with no compression in its history."""
    for original in originals:
        record = memory.get(original.id, scope=USER)
        if record.valid_to is not None or record.superseded_by is not None or record.content != original.content:
            return False
        if [e.event for e in memory.history(original.id, scope=USER)] != [EventType.ADD]:
            return False
    return True


def test_cut_off_compressed_memory_is_not_stored_and_the_originals_stay_current(
    fake: FakeLLMServer, open_memory: Callable[..., Memory]
) -> None:
    fake.script(truncated("Alice went hiking on"), truncated("Alice went hiking on twelve trails"))
    memory = open_memory(fake)
    originals = old_events(memory, 12)
    report = memory.consolidate(scope=USER)
    assert (report.compressed, report.summaries) == (0, ())
    [refused] = report.refused
    assert refused["replaces"] == 12 and refused["reason"].startswith("TruncatedAnswer: ")
    assert [r.json["max_tokens"] for r in fake.requests] == [1024, 2048]
    assert current_ids(memory) == {r.id for r in originals} and untouched(memory, originals)
    assert memory.list(scope=USER, filters=SearchFilter(kinds="summary", include_superseded=True)) == []


def test_cut_off_compressed_memory_asked_again_is_stored_whole(
    fake: FakeLLMServer, open_memory: Callable[..., Memory]
) -> None:
    fake.script(truncated("Alice went hiking on"), with_chatter(ANSWER))
    memory = open_memory(fake)
    originals = old_events(memory, 12)
    report = memory.consolidate(scope=USER)
    assert report.compressed == 12 and report.refused == () and report.method == "llm"
    summary = memory.get(report.summaries[0], scope=USER)
    assert summary.content == f"[Compressed memory] (2026-01-15) {ANSWER}"  # the chatter is not stored
    assert current_ids(memory) == {summary.id}
    assert all(memory.get(r.id, scope=USER).superseded_by == summary.id for r in originals)


def test_failure_in_group_2_of_3_keeps_group_1_and_leaves_the_rest_untouched(
    openai_fake: FakeLLMServer, open_memory: Callable[..., Memory]
) -> None:
    openai_fake.script(ANSWER, ANSWER, ANSWER).fail_on(2, error(400, "context length exceeded"))
    memory = open_memory(openai_fake)
    originals = old_events(memory, 36)
    first, rest = originals[:12], originals[12:]
    with pytest.raises(ConsolidationIncomplete) as caught:
        memory.consolidate(scope=USER)
    report = caught.value.report
    [summary_id] = report.summaries
    assert report.compressed == 12 and report.failed is not None and report.failed["position"] == 2
    assert report.failed["id"] == report.groups[1]["id"] and "context length exceeded" in report.failed["error"]
    message = str(caught.value)
    assert "stopped at group 2 of 3" in message and "ProviderError" in message
    assert f"1 group (12 memories) compressed before it and kept: {summary_id}" in message
    assert "groups 2-3 are unchanged, their memories still current" in message
    # group 1: compressed whole, its history kept; groups 2 and 3: as they were
    assert current_ids(memory) == {summary_id} | {r.id for r in rest}
    for original in first:
        assert memory.get(original.id, scope=USER).superseded_by == summary_id
        assert [e.event for e in memory.history(original.id, scope=USER)] == [EventType.ADD, EventType.COMPRESS]
    assert untouched(memory, rest)
    # running again continues with what is left
    again = memory.consolidate(scope=USER)
    assert again.compressed == 24 and len(again.summaries) == 2 and summary_id not in again.summaries
    assert len(current_ids(memory)) == 3


def test_queued_consolidation_failing_part_way_says_what_it_did(
    openai_fake: FakeLLMServer, open_memory: Callable[..., Memory]
) -> None:
    openai_fake.script(ANSWER, ANSWER, ANSWER).fail_on(2, error(400, "context length exceeded"))
    memory = open_memory(openai_fake, consolidate_every_turns=20)
    old_events(memory, 36)
    session = Scope(USER, session_id="s1")
    for i in range(20):
        memory.add_message("user", f"message {i}", scope=session)
    assert memory.process_queue() == 1
    [failure] = memory.queue_status().failures
    assert failure["error"].startswith("ConsolidationIncomplete: ") and "stopped at group 2 of 3" in failure["error"]
    assert "1 group (12 memories) compressed before it and kept" in failure["error"]
    assert len(memory.list(scope=USER, filters=SearchFilter(kinds="summary"))) == 1
    assert memory.process_queue() == 1  # the queue runs the job again: it finishes the other two groups
    assert memory.queue_status().failures == []
    assert len(memory.list(scope=USER, filters=SearchFilter(kinds="summary"))) == 3
