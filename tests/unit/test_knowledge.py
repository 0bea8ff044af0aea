"""Profile facts, entities and procedures through `Memory`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import InvalidInput, Memory, NotFound, Scope
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.entities import normalize_name
from memstrata.layers.profile import render_facts


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(store=f"sqlite:///{tmp_path / 'k.db'}", embedder=HashingEmbedder(64)) as m:
        yield m


def test_profile_facts_upsert_keep_previous_values_and_render(memory: Memory) -> None:
    memory.set_fact("contact", "preferred_contact_time", "Tuesday afternoon", scope="alice")
    memory.set_fact("identity", "location", "Paris", scope="alice")
    fact = memory.set_fact("identity", "location", "Berlin", scope="alice", source="chat")
    assert fact.value == "Berlin" and fact.previous[0]["value"] == "Paris"
    assert [f.key for f in memory.facts(scope="alice")] == ["preferred_contact_time", "location"]
    assert [f.value for f in memory.facts(scope="alice", category="identity")] == ["Berlin"]
    assert memory.facts(scope="bob") == []
    text = render_facts(memory.facts(scope="alice"))
    assert text.splitlines() == [
        "What I know about this user:",
        "- preferred contact time: Tuesday afternoon",
        "- location: Berlin",
    ]
    assert memory.delete_fact("identity", "location", scope="alice") is True
    assert [f.key for f in memory.facts(scope="alice")] == ["preferred_contact_time"]


@pytest.mark.parametrize(
    ("category", "key", "value"),
    [("bad cat!", "k", "v"), ("c", "", "v"), ("c", "k", ""), ("c", "k", "x" * 3000)],
    ids=["category", "key", "empty-value", "long-value"],
)
def test_profile_bad_input(memory: Memory, category: str, key: str, value: str) -> None:
    with pytest.raises(InvalidInput):
        memory.set_fact(category, key, value, scope="alice")
    assert memory.facts(scope="alice") == []


def test_entity_normalization() -> None:
    assert normalize_name("  The  Q3 Project ") == "q3 project"
    assert normalize_name("Sarah's") == "sarah"
    with pytest.raises(InvalidInput):
        normalize_name("   ")


def test_entities_upsert_per_user_with_aliases_and_counts(memory: Memory) -> None:
    memory.upsert_entity("Sarah", scope="alice", type="person", summary="Alice's manager", memory_id="m1")
    merged = memory.upsert_entity(
        "sarah", scope="alice", aliases=["Sarah Connor"], attributes={"role": "manager"}, memory_id="m2"
    )
    assert merged.mention_count == 2 and merged.type == "person" and merged.summary == "Alice's manager"
    assert merged.memory_ids == ("m1", "m2") and merged.attributes == {"role": "manager"}
    by_alias = memory.entity("Sarah Connor", scope="alice")
    assert by_alias.key == "sarah"
    memory.upsert_entity("Sarah Connor", scope="alice", memory_id="m3")
    assert memory.entity("SARAH", scope="alice").mention_count == 3
    assert [e.key for e in memory.entities(scope="alice")] == ["sarah"]
    with pytest.raises(NotFound):
        memory.entity("Sarah", scope="bob")


def test_procedures_by_task_user_and_agent_wide(memory: Memory) -> None:
    scope = Scope("alice", agent_id="helpdesk")
    memory.add_procedure("refund request", instruction="ask for the order number first", scope=scope)
    memory.add_procedure(
        "password reset",
        example_input="I forgot my password",
        example_output="Send the reset link",
        scope=scope,
        agent_wide=True,
    )
    found = memory.procedures("customer wants a refund for order", scope=scope, k=1)
    assert [p.task for p in found] == ["refund request"]
    reset = memory.procedures("password reset please", scope=Scope("bob", agent_id="helpdesk"), k=1)
    assert [p.type for p in reset] == ["example"]
    assert "Send the reset link" in reset[0].render()
    assert memory.procedures("password reset please", scope=Scope("bob", agent_id="other"), k=3) == []
    with pytest.raises(InvalidInput, match="agent_id"):
        memory.add_procedure("x", instruction="y", scope="alice", agent_wide=True)
