"""Memory that learns: extraction + resolution + entities/profile, and the background queue."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import EventType, Memory, ProviderError, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.resolution import DecisionKind
from memstrata.extraction.rules import RuleExtractor
from tests.support.clock import Clock

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory(store=f"sqlite:///{tmp_path / 'l.db'}", embedder=HashingEmbedder(64), clock=clock) as m:
        yield m


def say(memory: Memory, clock: Clock, text: str) -> list[DecisionKind]:
    clock.now += timedelta(days=1)
    result = memory.learn([{"role": "user", "content": text, "at": clock.now}], scope="alice", known_name="Alice")
    return [op.event for op in result.operations]


@pytest.mark.parametrize(
    ("before", "after", "query", "old_text", "new_text"),
    [
        ("I live in Paris.", "I moved to Berlin last month.", "where does Alice live", "Paris", "Berlin"),
        ("I work at Initech.", "Actually I work at Globex now.", "where does Alice work", "Initech", "Globex"),
        ("I prefer short answers.", "I prefer detailed answers.", "answer length preference", "short", "long"),
        ("I love green tea.", "I hate green tea.", "green tea", "loves", "hates"),
        ("My sister's name is Anna.", "Actually my sister's name is Ana, not Anna.", "sister name", "Anna.", "Ana."),
    ],
    ids=["location", "employer", "preference-flip", "like-to-dislike", "correction"],
)
def test_contradictions_supersede_and_keep_history(
    memory: Memory, clock: Clock, before: str, after: str, query: str, old_text: str, new_text: str
) -> None:
    assert say(memory, clock, before) == [DecisionKind.ADD]
    first_time = clock.now
    assert say(memory, clock, after) == [DecisionKind.SUPERSEDE]
    hits = memory.search(query, scope="alice", k=5)
    current = [h.memory.content for h in hits]
    assert any(new_text in c for c in current) and not any(old_text in c for c in current), current
    past = memory.search(query, scope="alice", k=5, filters=SearchFilter(as_of=first_time + timedelta(hours=1)))
    assert any(old_text in h.memory.content for h in past)
    old = next(h.memory for h in past if old_text in h.memory.content)
    history = memory.history(old.id, scope="alice")
    assert [e.event for e in history] == [EventType.ADD, EventType.SUPERSEDE]
    assert old_text in (history[1].before or "") and new_text in (history[1].after or "")


def test_unrelated_facts_never_retire_each_other(memory: Memory, clock: Clock) -> None:
    for text in ["I love green tea.", "I love black coffee.", "I live in Paris.", "My manager Sarah is great."]:
        assert say(memory, clock, text) == [DecisionKind.ADD]
    assert len(memory.list(scope="alice")) == 4


def test_duplicate_is_a_noop_that_refreshes_access(memory: Memory, clock: Clock) -> None:
    say(memory, clock, "I live in Paris.")
    assert say(memory, clock, "I live in Paris!") == [DecisionKind.NOOP]
    [record] = memory.list(scope="alice")
    assert record.access_count == 1


def test_entities_and_profile_are_updated(memory: Memory, clock: Clock) -> None:
    say(memory, clock, "My manager Sarah wants the Q3 report by Friday.")
    say(memory, clock, "I live in Paris.")
    say(memory, clock, "I moved to Berlin last month.")
    sarah = memory.entity("sarah", scope="alice")
    assert sarah.type == "person" and len(sarah.memory_ids) == 1
    facts = {(f.category, f.key): f.value for f in memory.facts(scope="alice")}
    assert facts[("identity", "location")] == "Berlin" and facts[("relation", "manager")] == "Sarah"
    location = memory._layers.profiles.get_fact("alice", "identity", "location")
    assert location.previous[0]["value"] == "Paris"


def test_add_with_infer(memory: Memory) -> None:
    result = memory.add("I prefer short answers.", scope="alice", infer=True)
    assert [m.kind.value for m in result.memories] == ["preference"]
    assert memory.add("I like hiking.", scope="alice", infer=False).kind.value == "fact"
    # learning what is already known returns the known memory (reconciliation: NOOP) ...
    again = memory.add("I prefer short answers.", scope="alice", infer=True)
    assert [(op.event.value, op.memory.id) for op in again.operations] == [("noop", result.memories[0].id)]
    # ... while a verbatim add stores the text as given, and returns it when stored identically before
    verbatim = memory.add("I prefer short answers.", scope="alice")
    assert verbatim.content == "I prefer short answers." and verbatim.id != result.memories[0].id
    assert memory.add("I prefer short answers.", scope="alice").id == verbatim.id


def test_small_talk_stores_nothing(memory: Memory, clock: Clock) -> None:
    assert say(memory, clock, "Hi! How are you today?") == []
    assert say(memory, clock, "What's the capital of France?") == []
    assert memory.list(scope="alice") == []


class FlakyExtractor:
    """Fails until told otherwise (a stand-in for an unreachable LLM endpoint)."""

    def __init__(self) -> None:
        self.fail = True
        self.rules = RuleExtractor()

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        if self.fail:
            raise ProviderError("LLM endpoint http://127.0.0.1:9/v1 unreachable")
        return self.rules.extract(messages, known_name=known_name)


def test_background_queue_is_durable_and_failures_are_visible(tmp_path: Path) -> None:
    flaky = FlakyExtractor()
    url = f"sqlite:///{tmp_path / 'q.db'}"
    with Memory(store=url, embedder=HashingEmbedder(64), extractor=flaky) as m:
        job = m.learn_later("I live in Paris.", scope="alice")
        m.learn_later("I love green tea.", scope="bob")
        assert m.queue_status().counts == {"pending": 2, "done": 0, "failed": 0}
        for _ in range(3):
            m.process_queue()
        status = m.queue_status()
        assert status.counts["failed"] == 2
        assert {f["id"] for f in status.failures} >= {job}
        assert all("unreachable" in f["error"] for f in status.failures)
    with Memory(store=url, embedder=HashingEmbedder(64), extractor=RuleExtractor()) as restarted:
        restarted.learn_later("I work at Initech.", scope="alice")
        assert restarted.process_queue() == 1
        assert restarted.queue_status().counts == {"pending": 0, "done": 1, "failed": 2}
        assert [r.content for r in restarted.list(scope="alice")] == ["The user works at Initech."]
