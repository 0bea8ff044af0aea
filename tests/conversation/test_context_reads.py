"""`context()` asks the store for its independent reads together (`layers/context_reads.py`, `Store.read_many`):
on every backend the result, text and parts, is the one the single reads give, for a fixed data set of
every kind of part; and a call of `read_context` asks for exactly what the parts need."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from memstrata import namespaces
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.context import PARTS
from memstrata.layers.entities import EntityMemory
from memstrata.layers.procedures import ProceduralMemory
from memstrata.layers.profile import ProfileMemory
from memstrata.memory import Memory
from memstrata.models import Scope
from memstrata.settings import Settings
from memstrata.storage.base import Read, Store, read_each
from tests.support.clock import Clock

from .conftest import T0

ALICE = Scope("alice")
CURRENT = Scope("alice", session_id="s2")
QUERIES = (
    "How is the Porto marathon training going?",
    "What should I eat before the race?",  # advice: the standing facts come along
    "What does Alice like?",  # names the user: her known names from the profile
    "Tell me about Marco and the marathon plan",  # an entity and a procedure
    "weather on Mars",  # nothing relevant
    None,
)


@pytest.fixture
def seeded(store: Store) -> Iterator[Memory]:
    """Profile facts, learned memories, episodes of an old session, an entity, a procedure, a user context
    object and a current session folded into a summary, on the store of each backend."""
    clock = Clock(T0)
    settings = Settings(llm=None, buffer="memory://", window_size=4, summary_threshold=3)
    memory = Memory(store=store, embedder=HashingEmbedder(64), clock=clock, settings=settings, track_access=False)
    profiles = ProfileMemory(store=store, clock=clock)
    profiles.set_fact("alice", "identity", "name", "Alice")
    profiles.set_fact("alice", "identity", "home_city", "Lisbon")
    memory.add("Alice prefers short answers", scope=ALICE, kind="preference")
    memory.add("Alice is vegetarian and avoids dairy", scope=ALICE, kind="preference")
    memory.add("Alice is training for the Porto marathon in October", scope=ALICE, kind="event")
    memory.add("Alice is allergic to peanuts", scope=ALICE)
    old = Scope("alice", session_id="s1")
    memory.add_message("user", "I ran 30 km on Sunday for marathon training", speaker="Alice", scope=old)
    memory.add_message("assistant", "Great long run! Remember to hydrate.", scope=old)
    EntityMemory(store=store, clock=clock).upsert(
        "alice", "Marco", type="person", summary="Alice's running coach", attributes={"city": "Porto"}
    )
    ProceduralMemory(semantic=memory._layers.semantic).add(ALICE, "marathon plan", instruction="Answer with a table")
    store.put_item(
        "alice",
        namespaces.USER_CONTEXT,
        "user",
        {"facts": ["Alice has a dog named Rex"], "last_topics": ["marathon"], "open_items": ["pay the race fee"]},
    )
    clock.advance(days=1)
    for n in range(1, 10):
        memory.add_message("user", f"Turn {n}: Marco says the marathon pace is {n} min.", scope=CURRENT)
    try:
        yield memory
    finally:
        memory.close()


def contexts(memory: Memory) -> list[Any]:
    scopes = (CURRENT, ALICE, Scope("alice", agent_id="coach", session_id="s2"))
    found = [memory.context(q, max_tokens=b, scope=s) for q in QUERIES for s in scopes for b in (60, 400, 2000)]
    found += [memory.context(QUERIES[0], scope=CURRENT, include=[part]) for part in PARTS]
    return found


def test_context_is_the_one_the_single_reads_give(seeded: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    store = seeded.store
    together = contexts(seeded)
    monkeypatch.setattr(store, "read_many", partial(read_each, store))  # each read by its own method
    one_by_one = contexts(seeded)
    assert together == one_by_one
    assert [p.name for p in together[2].parts] == list(PARTS)  # every part is compared, with its items
    assert {d for c in together for d in c.dropped} == set(PARTS) - {"summary", "recent"}  # and small budgets


def test_a_context_call_reads_what_its_parts_need_in_one_read_many(
    seeded: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = seeded.store
    asked: list[list[Read]] = []
    real = store.read_many

    def counted(user_id: str, reads: list[Read]) -> list[Any]:
        asked.append(list(reads))
        return real(user_id, reads)

    monkeypatch.setattr(store, "read_many", counted)
    seeded.context(QUERIES[1], scope=CURRENT)
    # generation, user context, profile, session, entities, known names, standing facts, 3 look-ups
    assert [len(reads) for reads in asked] == [10]
    asked.clear()
    seeded.context(None, scope=ALICE, include=["pending"])
    assert [[type(r).__name__ for r in reads] for reads in asked] == [["ItemRead"]]
