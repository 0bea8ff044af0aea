"""The turn policy's count: kept in process, written to the user's state once every N turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory, Scope
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import StoreError
from memstrata.layers.lifecycle.consolidation import STATE_KEY
from memstrata.layers.lifecycle.policy import LIFECYCLE
from memstrata.layers.lifecycle.turn_tally import TurnTally
from memstrata.settings import Settings


def test_a_tally_is_given_up_when_it_reaches_every() -> None:
    tally = TurnTally()
    assert [tally.add("alice", 1, 3) for _ in range(3)] == [0, 0, 3]
    assert tally.pending("alice") == 0
    assert tally.add("alice", 5, 3) == 5  # a batch past the step is given up whole
    assert tally.add("bob", 2, 3) == 0 and tally.pending("alice") == 0 and tally.pending("bob") == 2


def test_given_back_turns_count_towards_the_next_write_and_forget_drops_them() -> None:
    tally = TurnTally()
    taken = tally.add("alice", 3, 3)
    tally.give_back("alice", taken)
    assert tally.pending("alice") == 3
    tally.forget("alice")
    assert tally.pending("alice") == 0 and tally.add("alice", 1, 3) == 0


def test_the_tally_is_bounded_dropping_the_least_recently_counted_user() -> None:
    tally = TurnTally(limit=2)
    tally.add("a", 1, 10)
    tally.add("b", 1, 10)
    tally.add("a", 1, 10)  # a is now the most recent
    tally.add("c", 1, 10)
    assert (tally.pending("a"), tally.pending("b"), tally.pending("c")) == (2, 0, 1)
    with pytest.raises(ValueError, match="limit"):
        TurnTally(limit=0)


def _memory(tmp_path: Path, every: int) -> Memory:
    return Memory(
        store=f"sqlite:///{tmp_path / 'tally.db'}",
        embedder=HashingEmbedder(64),
        settings=Settings(consolidate_every_turns=every),
    )


def test_turns_store_nothing_until_the_step_and_one_write_then(tmp_path: Path) -> None:
    with _memory(tmp_path, 4) as memory:
        session = Scope("alice", session_id="s1")
        writes: list[str] = []
        put_item = memory.store.put_item

        def counting_put(user_id: str, namespace: str, key: str, value: dict[str, Any]) -> Any:
            writes.append(namespace)
            return put_item(user_id, namespace, key, value)

        memory.store.put_item = counting_put  # type: ignore[method-assign]
        for n in range(7):
            memory.add_message("user", f"message {n}", scope=session)
        assert writes.count(LIFECYCLE) == 1
        state = memory.store.get_item("alice", LIFECYCLE, STATE_KEY)
        assert state is not None and state.value == {"turns": 4, "queued": True}


def test_a_failed_state_write_keeps_the_turns_for_the_next_one(tmp_path: Path) -> None:
    with _memory(tmp_path, 2) as memory:
        session = Scope("alice", session_id="s1")
        memory.add_message("user", "one", scope=session)
        put_item = memory.store.put_item

        def failing_put(user_id: str, namespace: str, key: str, value: dict[str, Any]) -> Any:
            if namespace == LIFECYCLE:
                raise StoreError("the store is down")
            return put_item(user_id, namespace, key, value)

        memory.store.put_item = failing_put  # type: ignore[method-assign]
        with pytest.raises(StoreError, match="down"):
            memory.add_message("user", "two", scope=session)
        memory.store.put_item = put_item  # type: ignore[method-assign]
        memory.add_message("user", "three", scope=session)
        state = memory.store.get_item("alice", LIFECYCLE, STATE_KEY)
        assert state is not None and state.value == {"turns": 3, "queued": True}


def test_erasure_forgets_the_users_counted_turns(tmp_path: Path) -> None:
    with _memory(tmp_path, 3) as memory:
        session = Scope("alice", session_id="s1")
        for n in range(2):
            memory.add_message("user", f"before {n}", scope=session)
        memory.erase_user(scope="alice")
        for n in range(2):
            memory.add_message("user", f"after {n}", scope=session)
        assert memory.store.get_item("alice", LIFECYCLE, STATE_KEY) is None  # 2 turns since the erasure
        memory.add_message("user", "third", scope=session)
        state = memory.store.get_item("alice", LIFECYCLE, STATE_KEY)
        assert state is not None and state.value["turns"] == 3
