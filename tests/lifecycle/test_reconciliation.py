"""Reconciliation of what `learn` stores (a verbatim `add` reconciles nothing), valid time from the message,
on every store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memstrata import EventType, Memory, ProviderError, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Message
from memstrata.extraction.resolution import DecisionKind
from memstrata.extraction.rules import RuleExtractor
from memstrata.llm.base import ChatMessage
from memstrata.llm.scripted import ScriptedLLM
from memstrata.storage.base import Store

T2024 = datetime(2024, 5, 1, 12, tzinfo=UTC)
T2025 = datetime(2025, 5, 1, 12, tzinfo=UTC)
T2026 = datetime(2026, 1, 10, 12, tzinfo=UTC)


@pytest.fixture
def memory(store: Store) -> Iterator[Memory]:
    yield Memory(store=store, embedder=HashingEmbedder(64), track_access=False)


def current(memory: Memory, user: str = "alice") -> list[str]:
    return sorted(r.content for r in memory.list(scope=user))


def said(memory: Memory, text: str, at: datetime | None = None, user: str = "alice") -> list[DecisionKind]:
    message = {"role": "user", "content": text, **({"at": at} if at else {})}
    return [op.event for op in memory.learn(message, scope=user).operations]


def test_add_then_learn_leaves_one_employer_and_keeps_the_old_in_history(memory: Memory) -> None:
    acme = memory.add("Alice works at Acme Corp", scope="alice")
    assert DecisionKind.SUPERSEDE in said(memory, "I no longer work at Acme, I joined Globex")
    assert current(memory) == ["The user works at Globex."]
    [old] = [r for r in memory.list(scope="alice", filters=SearchFilter(include_superseded=True)) if r.id == acme.id]
    assert old.valid_to is not None and old.superseded_by is not None
    assert [e.event for e in memory.history(acme.id, scope="alice")] == [EventType.ADD, EventType.SUPERSEDE]
    assert "Acme" not in memory.context("where does Alice work?", 500, scope="alice").text


def test_opposite_stance_said_now_supersedes(memory: Memory) -> None:
    said(memory, "I love coffee.")
    assert said(memory, "I hate coffee now.") == [DecisionKind.SUPERSEDE]
    assert current(memory) == ["The user hates coffee."]


def test_a_new_value_learned_retires_the_old_one_and_a_verbatim_add_retires_nothing(memory: Memory) -> None:
    memory.learn("Alice lives in Lisbon", scope="alice", known_name="Alice")
    memory.learn("Alice lives in Porto", scope="alice", known_name="Alice")
    assert current(memory) == ["The user lives in Porto."]  # the user's own name reads as "the user"
    memory.add("Alice lives in Madrid", scope="alice")  # stored as given, beside what was learned
    assert current(memory) == ["Alice lives in Madrid", "The user lives in Porto."]


def test_a_retraction_alone_retires_what_it_names_and_is_kept(memory: Memory) -> None:
    said(memory, "I live in Berlin.")
    said(memory, "I no longer live in Berlin")
    assert current(memory) == ["The user no longer lives in Berlin."]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I love tea.", "I love coffee."),
        ("My manager is Bob.", "My sister is Ana."),
        ("I live in Berlin.", "I work at Globex."),
        ("I love tea.", "I don't drink coffee anymore"),
        ("I work at Acme.", "Sarah no longer works at Initech"),
        ("I love jazz.", "I used to play chess"),
    ],
)
def test_an_unrelated_fact_never_retires_another(memory: Memory, first: str, second: str) -> None:
    said(memory, first)
    before = current(memory)
    said(memory, second)
    assert set(before) <= set(current(memory))


# -- valid time -----------------------------------------------------------------------------------
def test_an_older_statement_never_supersedes_a_newer_one(memory: Memory) -> None:
    said(memory, "I live in Porto.", T2026)
    assert said(memory, "I live in Madrid.", T2024) == [DecisionKind.HISTORY]
    assert current(memory) == ["The user lives in Porto."]
    [madrid] = [
        r for r in memory.list(scope="alice", filters=SearchFilter(include_superseded=True)) if "Madrid" in r.content
    ]
    porto = memory.list(scope="alice")[0]
    assert madrid.valid_from == T2024 and madrid.valid_to == T2026 and madrid.superseded_by == porto.id
    assert [r.content for r in memory.list(scope="alice", filters=SearchFilter(as_of=T2025))] == [
        "The user lives in Madrid."
    ]


def test_valid_time_comes_from_the_message_and_recorded_time_from_the_store(memory: Memory) -> None:
    said(memory, "I live in Madrid.", T2024)
    said(memory, "I moved to Porto.", T2026)
    records = memory.list(scope="alice", filters=SearchFilter(include_superseded=True))
    by_text = {r.content: r for r in records}
    madrid, porto = by_text["The user lives in Madrid."], by_text["The user lives in Porto."]
    assert madrid.valid_from == T2024 and porto.valid_from == T2026 and madrid.valid_to == T2026
    assert porto.created_at > T2026  # recorded now, by the store's clock
    assert [r.content for r in memory.list(scope="alice", filters=SearchFilter(as_of=T2025))] == [
        "The user lives in Madrid."
    ]


def test_a_retraction_said_before_the_fact_becomes_its_history(memory: Memory) -> None:
    said(memory, "I live in Berlin.", T2026)
    said(memory, "I no longer live in Berlin", T2025)
    assert current(memory) == ["The user lives in Berlin."]


# -- with an LLM ----------------------------------------------------------------------------------
def learner(memory: Memory, llm: ScriptedLLM) -> Memory:
    """A second Memory over the same store, with the LLM configured (the rules still extract)."""
    return Memory(store=memory.store, embedder=HashingEmbedder(64), llm=llm, extractor=RuleExtractor())


def learn(learning: Memory, text: str, at: datetime = T2026) -> list[DecisionKind]:
    return [op.event for op in learning.learn([Message("user", text, at)], scope="alice").operations]


def test_the_llm_decides_one_structured_decision_per_candidate_repaired(memory: Memory) -> None:
    said(memory, "I live in Lisbon.", T2025)
    llm = ScriptedLLM(["```json\n{'decisions': [{'fact': 0, 'action': 'supersede', 'target': '#0',}]}\n```"])
    assert learn(learner(memory, llm), "we moved to Seville for my wife's job") == [DecisionKind.SUPERSEDE]
    assert current(memory) == ["The user lives in Seville."]
    [call] = llm.calls
    assert "0. The user lives in Lisbon." in call.prompt and "NEW facts:\n0. The user lives in Seville." in call.prompt


def test_the_llm_may_keep_both_and_may_not_retire_an_unrelated_memory(memory: Memory) -> None:
    said(memory, "I love tea.", T2025)
    llm = ScriptedLLM(['{"decisions": [{"fact": 0, "action": "DELETE", "target": 0}]}'])
    assert learn(learner(memory, llm), "I love coffee.") == [DecisionKind.ADD]
    assert current(memory) == ["The user loves coffee.", "The user loves tea."]


def test_the_rules_decide_when_the_llm_fails(memory: Memory) -> None:
    said(memory, "I love coffee.", T2025)
    llm = ScriptedLLM([ProviderError("down"), "not json at all"])
    learning = learner(memory, llm)
    assert learn(learning, "I hate coffee now.") == [DecisionKind.SUPERSEDE]
    assert learn(learning, "I love tea.") == [DecisionKind.ADD]
    assert current(memory) == ["The user hates coffee.", "The user loves tea."]


def test_the_llm_sees_every_candidate_against_the_numbered_memories(memory: Memory) -> None:
    said(memory, "I work at Initech.", T2025)

    def answer(messages: list[ChatMessage]) -> str:
        assert "EXISTING memories:\n0. The user works at Initech." in messages[-1].content
        return '{"decisions": [{"fact": 0, "action": "NOOP", "target": 0}]}'

    assert learn(learner(memory, ScriptedLLM([answer])), "I still work at Initech") == [DecisionKind.NOOP]
    assert current(memory) == ["The user works at Initech."]


# -- reversals said in chat -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "then", "left"),
    [
        ("I'm vegetarian.", "I started eating meat again", ["The user eats meat again."]),
        ("I am a vegetarian", "I eat meat again these days", ["The user eats meat again."]),
        ("I'm vegetarian.", "I'm not vegetarian anymore", ["The user is no longer vegetarian."]),
        ("My manager is Bob.", "Tom is my new manager", ["The user's manager is Tom."]),
        ("my boss is Sam", "my new boss is Dana", ["The user's boss is Dana."]),
    ],
)
def test_a_reversal_said_in_chat_retires_the_old_memory(memory: Memory, first: str, then: str, left: list[str]) -> None:
    said(memory, first, T2025)
    assert said(memory, then, T2026)[-1] is DecisionKind.SUPERSEDE
    assert current(memory) == left
    everything = memory.list(scope="alice", filters=SearchFilter(include_superseded=True))
    assert any(r.valid_to == T2026 for r in everything)  # the old memory ended when the reversal was said


def test_a_new_manager_learned_leaves_a_verbatim_one_in_history(memory: Memory) -> None:
    bob = memory.add("Alice's manager is Bob", scope="alice")
    assert said(memory, "Tom is my new manager") == [DecisionKind.SUPERSEDE]
    assert current(memory) == ["The user's manager is Tom."]
    assert [e.event for e in memory.history(bob.id, scope="alice")] == [EventType.ADD, EventType.SUPERSEDE]
