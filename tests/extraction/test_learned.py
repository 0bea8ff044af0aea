"""What the offline extractor's candidates become once learned (real SQLite store, resolution, entities)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import Memory, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(store=f"sqlite:///{tmp_path / 'learned.db'}", embedder=HashingEmbedder(64)) as m:
        yield m


class Chat:
    def __init__(self, memory: Memory) -> None:
        self.memory, self.at = memory, datetime(2026, 3, 1, 9, tzinfo=UTC)

    def say(self, text: str) -> list[tuple[str, str]]:
        self.at += timedelta(days=1)
        result = self.memory.learn([{"role": "user", "content": text, "at": self.at}], scope="alice")
        return [(op.event.value, op.memory.kind.value) for op in result.operations]

    def current(self) -> set[str]:
        return {m.content for m in self.memory.list(scope="alice")}


def test_a_job_change_leaves_only_the_new_employer_current(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I work at Acme.")
    chat.say("I no longer work at Acme, I joined Globex")
    assert chat.current() == {"The user works at Globex."}


def test_hating_coffee_now_retires_loving_it(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I love coffee.")
    chat.say("I hate coffee now.")
    assert chat.current() == {"The user hates coffee."}


def test_a_standing_instruction_is_one_procedure(memory: Memory) -> None:
    chat = Chat(memory)
    assert chat.say("always answer in French") == [("add", "procedure")]
    assert chat.say("Always answer in French.") == [("noop", "procedure")]


def test_memories_about_and_with_sarah_are_linked_to_her(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I had lunch with Sarah today.")
    chat.say("Sarah moved to the London office.")
    sarah = memory.entity("sarah", scope="alice")
    assert sarah.type == "person" and len(sarah.memory_ids) == 2
    assert "Sarah moved to the London office." in chat.current()


def test_a_statement_restated_with_a_new_number_replaces_the_old_one(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I need 120 stars to reach the gold level.")
    chat.say("Update: I now need 80 stars to reach the gold level.")
    assert chat.current() == {"The user now needs 80 stars to reach the gold level."}
    history = {m.content for m in memory.list(scope="alice", filters=SearchFilter(include_superseded=True))}
    assert "The user needs 120 stars to reach the gold level." in history


def test_a_statement_the_user_retracts_is_retired(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I drink coffee every morning")
    chat.say("I don't drink coffee anymore")
    assert "The user drinks coffee every morning." not in chat.current()


def test_statements_about_different_things_both_stay_current(memory: Memory) -> None:
    chat = Chat(memory)
    chat.say("I have two kids and a dog named Rex.")
    chat.say("I have 120 stars on the coffee app.")
    assert chat.current() == {"The user has two kids and a dog named Rex.", "The user has 120 stars on the coffee app."}
