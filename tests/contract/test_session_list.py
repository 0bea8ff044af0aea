"""`Store.list_sessions` on every backend: distinct session ids of the user's current episodes with
their counts and first/last times, most recently active first, paged; other users' sessions,
episodes without a session and non-episode memories are not sessions."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from memstrata.errors import InvalidInput
from memstrata.models import MemoryKind, Scope
from memstrata.storage.base import MemoryFilter, SessionRow, Store

from .test_store_contract import T0, put


def episode(store: Store, user: str, session: str | None, minute: int) -> None:
    at = T0 + timedelta(minutes=minute)
    put(
        store,
        Scope(user, session_id=session),
        f"turn at minute {minute} of {session}",
        kind=MemoryKind.EPISODE,
        created_at=at,
    )


def test_sessions_with_counts_and_times_newest_first_and_paged(store: Store) -> None:
    for minute in range(3):
        episode(store, "alice", "s-old", minute)
    for minute in (10, 30):
        episode(store, "alice", "s-new", minute)
    episode(store, "alice", "s-mid", 20)
    episode(store, "alice", None, 40)  # an episode outside any session
    put(store, Scope("alice", session_id="s-fact"), "a fact said in a session", created_at=T0 + timedelta(hours=2))
    episode(store, "bob", "s-bob", 50)

    sessions = store.list_sessions("alice")
    assert sessions == [
        SessionRow("s-new", 2, T0 + timedelta(minutes=10), T0 + timedelta(minutes=30)),
        SessionRow("s-mid", 1, T0 + timedelta(minutes=20), T0 + timedelta(minutes=20)),
        SessionRow("s-old", 3, T0, T0 + timedelta(minutes=2)),
    ]
    assert store.list_sessions("alice", limit=2, offset=1) == sessions[1:]
    assert store.list_sessions("alice", limit=1, offset=3) == []
    assert [s.session_id for s in store.list_sessions("bob")] == ["s-bob"]
    assert store.list_sessions("carol") == []


def test_superseded_episodes_are_not_counted(store: Store) -> None:
    episode(store, "alice", "s1", 0)
    episode(store, "alice", "s1", 1)
    [latest, _] = store.list_memories("alice", MemoryFilter(session_id="s1"))
    store.save("alice", [replace(latest, valid_to=T0 + timedelta(minutes=5))])
    assert [(s.session_id, s.episodes) for s in store.list_sessions("alice")] == [("s1", 1)]


def test_a_page_past_thousands_of_episodes_still_lists_every_session(store: Store) -> None:
    for session in range(12):
        for turn in range(50):
            episode(store, "alice", f"s{session:02d}", session * 100 + turn)
    listed = store.list_sessions("alice", limit=5, offset=0) + store.list_sessions("alice", limit=10, offset=5)
    assert [s.session_id for s in listed] == [f"s{n:02d}" for n in range(11, -1, -1)]
    assert {s.episodes for s in listed} == {50}


@pytest.mark.parametrize(("limit", "offset"), [(-1, 0), (10, -3), ("10", 0)])
def test_bad_pages_are_refused(store: Store, limit: object, offset: object) -> None:
    with pytest.raises(InvalidInput):
        store.list_sessions("alice", limit=limit, offset=offset)  # type: ignore[arg-type]
