"""`Memory.context()`: parts, formats, budget, priorities, determinism."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from memstrata import namespaces
from memstrata.core.tokens import count_tokens
from memstrata.errors import InvalidInput
from memstrata.layers.context import NO_MEMORIES, PARTS, PRIORITY
from memstrata.layers.entities import EntityMemory
from memstrata.layers.procedures import ProceduralMemory
from memstrata.layers.profile import ProfileMemory
from memstrata.models import Scope

from .conftest import Clock, MemoryFactory

ALICE = Scope("alice")
S2 = Scope("alice", session_id="s2")


@pytest.fixture
def rich(make_memory: MemoryFactory, clock: Clock) -> Any:
    """A user with profile facts, memories, episodes of an old session, an entity, a procedure,
    a user context object and a current session with a summary and recent turns."""
    memory = make_memory()
    ProfileMemory(store=memory.store, clock=clock).set_fact("alice", "identity", "name", "Alice")
    ProfileMemory(store=memory.store, clock=clock).set_fact("alice", "identity", "home_city", "Lisbon")
    memory.add("Alice prefers short answers", scope=ALICE, kind="preference")
    memory.add("Alice is training for the Porto marathon in October", scope=ALICE, kind="event")
    memory.add("Alice is allergic to peanuts", scope=ALICE)
    old = Scope("alice", session_id="s1")
    memory.add_message("user", "I ran 30 km on Sunday for marathon training", speaker="Alice", scope=old)
    memory.add_message("assistant", "Great long run! Remember to hydrate.", scope=old)
    EntityMemory(store=memory.store, clock=clock).upsert(
        "alice", "Marco", type="person", summary="Alice's running coach", attributes={"city": "Porto"}
    )
    procedures = ProceduralMemory(semantic=memory._layers.semantic)
    procedures.add(ALICE, "marathon plan", instruction="Answer with a weekly table")
    memory.store.put_item(
        "alice",
        namespaces.USER_CONTEXT,
        "user",
        {
            "facts": ["Alice has a dog named Rex"],
            "preferences": {"units": "metric"},
            "last_topics": ["marathon", "nutrition", "shoes"],
            "open_items": ["send the race registration"],
            "last_session": "2026-03-01T10:00:00+00:00",
        },
    )
    clock.advance(days=1)
    for n in range(1, 12):
        memory.add_message(
            "user" if n % 2 else "assistant", f"Turn {n}: Marco says the October marathon pace is {n} min.", scope=S2
        )
    return memory


def test_all_parts_in_priority_order_with_the_seed_formats(rich: Any) -> None:
    context = rich.context("How is my marathon training going with Marco?", 3000, scope=S2)
    assert [p.name for p in context.parts] == list(PARTS) and context.dropped == ()
    text = context.text
    assert text.startswith("What I know about this user:\n- name: Alice\n- home city: Lisbon\n- units: metric\n")
    assert "- Alice has a dog named Rex" in text
    assert "Relevant memories from past conversations:\n" in text
    assert "- [2 March 2026] Alice is training for the Porto marathon in October" in text
    assert "- [2 March 2026] Alice: I ran 30 km on Sunday for marathon training" in text
    assert "Relevant people, places and things:\n- Marco (person): Alice's running coach; city: Porto" in text
    assert "Relevant procedures:\n- marathon plan: Answer with a weekly table" in text
    assert "Pending from last session: send the race registration" in text
    assert "Last talked about: marathon, nutrition, shoes" in text
    assert "Summary of earlier in this conversation:\n" in text
    assert text.endswith(
        "assistant: Turn 10: Marco says the October marathon pace is 10 min.\n"
        "user: Turn 11: Marco says the October marathon pace is 11 min."
    )
    assert context.tokens == count_tokens(text) == sum(p.tokens for p in context.parts)
    assert str(context) == text and context.part("recent") is not None


def test_recent_turns_are_not_repeated_as_memories(rich: Any) -> None:
    context = rich.context("marathon pace", 3000, scope=S2)
    memories = context.part("memories")
    assert memories is not None and "Turn 11" not in memories.text and "Turn 10" not in memories.text
    assert "Turn 3" in memories.text  # folded into the summary, still a relevant episode


def test_no_relevant_past_context(make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory.add("Alice likes tennis", scope=ALICE)
    context = memory.context("quantum chromodynamics lecture", 500, scope=ALICE)
    assert context.text == f"Relevant memories from past conversations:\n{NO_MEMORIES}"
    assert memory.context(None, 500, scope=ALICE).text == ""


@pytest.mark.parametrize("budget", [1, 7, 15, 30, 60, 100, 160, 250, 400, 700])
def test_context_never_exceeds_max_tokens(rich: Any, budget: int) -> None:
    context = rich.context("marathon training with Marco in Porto", budget, scope=S2)
    assert context.tokens <= budget and count_tokens(context.text) == context.tokens


def test_lower_priority_parts_are_dropped_first(rich: Any) -> None:
    seen_partial = False
    for budget in range(10, 900, 10):
        context = rich.context("marathon training", budget, scope=S2)
        names = [p.name for p in context.parts]
        kept = sorted(names, key=PRIORITY.index)
        assert kept == list(PRIORITY[: len(names)]), budget  # always the most important parts
        assert names == [n for n in PARTS if n in names], budget  # shown in display order
        assert list(context.dropped) == list(PRIORITY[len(names) :]), budget
        assert names[-1] == "recent", budget  # the live conversation is kept at every budget
        assert budget < 300 or names[-2:] == ["summary", "recent"], budget
        last = next((p for p in context.parts if p.name == kept[-1]), None)
        seen_partial |= last is not None and 0 < last.items < last.total_items
    assert seen_partial  # a part is trimmed inside before the next one is dropped


def test_context_is_deterministic(rich: Any) -> None:
    first = rich.context("marathon pace and shoes", 400, scope=S2)
    second = rich.context("marathon pace and shoes", 400, scope=S2)
    assert first == second


def test_include_selects_parts_and_arguments_are_validated(rich: Any, clock: Clock) -> None:
    context = rich.context("marathon", 2000, include=["recent", "profile"], scope=S2)
    assert [p.name for p in context.parts] == ["recent", "profile"]  # the given order is the priority
    with pytest.raises(InvalidInput, match="unknown context part"):
        rich.context("marathon", 100, include=["weather"], scope=S2)
    with pytest.raises(InvalidInput, match="max_tokens"):
        rich.context("marathon", 0, scope=S2)
    user_level = rich.context("marathon", 2000, scope=ALICE)
    assert user_level.part("recent") is None and user_level.part("summary") is None


def test_memories_are_shown_in_date_order(make_memory: MemoryFactory, clock: Clock) -> None:
    memory = make_memory()
    memory.add("Alice visited Rome for a conference", scope=ALICE, created_at=clock.now - timedelta(days=40))
    memory.add("Alice visited Rome again for holidays", scope=ALICE, created_at=clock.now - timedelta(days=2))
    text = memory.context("Rome visits", 500, scope=ALICE).text
    assert text.index("[21 January 2026]") < text.index("[28 February 2026]")
