"""Bitemporal memory: ingesting a chat log out of order ends in the same current state as in order."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstrata import Memory, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import MemoryRecord
from memstrata.storage.base import Store
from tests.support.clock import Clock

STATEMENTS = (
    "I live in Madrid.",
    "I moved to Porto.",
    "ok so we finally moved to Lisbon last month",
    "I no longer live in Madrid",
    "I work at Acme.",
    "I joined Globex.",
    "I love coffee.",
    "I hate coffee now.",
    "I used to love coffee",
    "My manager is Bob.",
    "My manager is Karen.",
    "I love tea.",
)
START = datetime(2021, 1, 4, 9, tzinfo=UTC)
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)

logs = st.lists(st.sampled_from(STATEMENTS), min_size=2, max_size=7).flatmap(
    lambda texts: st.tuples(st.just(texts), st.permutations(range(len(texts))))
)


def ingest(memory: Memory, user: str, texts: list[str], order: list[int]) -> list[str]:
    """Learn message i (said on day i) in the given order; the user's current memories at the end."""
    for i in order:
        said = START + timedelta(days=i)
        memory.learn({"role": "user", "content": texts[i], "at": said}, scope=user)
    return sorted(r.content for r in memory.list(scope=user, limit=500))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(log=logs)
@example(log=(["I used to love coffee", "I hate coffee now."], [1, 0]))  # same value, other words: newest wording wins
def test_out_of_order_ingestion_ends_in_the_in_order_state(store: Store, log: tuple[list[str], list[int]]) -> None:
    texts, shuffled = log
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    in_order = ingest(memory, f"a-{uuid.uuid4().hex}", texts, list(range(len(texts))))
    out_of_order = ingest(memory, f"b-{uuid.uuid4().hex}", texts, list(shuffled))
    assert out_of_order == in_order


PARIS, MADRID, MUNICH, BERLIN = (datetime(year, 1, 1, tzinfo=UTC) for year in (2020, 2021, 2022, 2023))


def lived(memory: Memory, user: str, *, as_of: datetime, **more: object) -> list[str]:
    """The cities the user's current memories name as of `as_of` (in valid time)."""
    found = memory.list(scope=user, filters=SearchFilter(as_of=as_of, **more), limit=50)  # type: ignore[arg-type]
    return sorted(next(c for c in ("Paris", "Madrid", "Munich", "Berlin") if c in r.content) for r in found)


def by_city(memory: Memory, user: str) -> dict[str, MemoryRecord]:
    every = memory.list(scope=user, filters=SearchFilter(include_superseded=True), limit=50)
    return {next(c for c in ("Paris", "Madrid", "Munich", "Berlin") if c in r.content): r for r in every}


def test_a_late_arriving_older_value_ends_where_the_next_value_in_valid_time_begins(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False, clock=Clock(NOW))
    for city, said in (("Madrid", MADRID), ("Berlin", BERLIN), ("Paris", PARIS)):
        memory.learn({"role": "user", "content": f"I live in {city}.", "at": said}, scope="u")
    cities = by_city(memory, "u")
    assert cities["Paris"].superseded_by == cities["Madrid"].id
    assert cities["Paris"].valid_to == MADRID
    assert cities["Madrid"].superseded_by == cities["Berlin"].id  # the newer value is not touched
    assert lived(memory, "u", as_of=PARIS + timedelta(days=200)) == ["Paris"]
    assert lived(memory, "u", as_of=MADRID + timedelta(days=200)) == ["Madrid"]
    assert lived(memory, "u", as_of=BERLIN + timedelta(days=1)) == ["Berlin"]


def test_a_value_said_between_two_others_is_inserted_into_their_chain(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False, clock=Clock(NOW))
    for city, said in (("Madrid", MADRID), ("Berlin", BERLIN), ("Munich", MUNICH)):
        memory.learn({"role": "user", "content": f"I live in {city}.", "at": said}, scope="u")
    cities = by_city(memory, "u")
    assert (cities["Madrid"].superseded_by, cities["Madrid"].valid_to) == (cities["Munich"].id, MUNICH)
    assert (cities["Munich"].superseded_by, cities["Munich"].valid_to) == (cities["Berlin"].id, BERLIN)
    for start, city in ((MADRID, "Madrid"), (MUNICH, "Munich"), (BERLIN, "Berlin")):
        assert lived(memory, "u", as_of=start + timedelta(days=180)) == [city]


def test_supersede_never_retires_a_memory_valid_after_the_new_one(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False, clock=Clock(NOW))
    later = memory.add("Alice will live in Berlin.", scope="u", created_at=NOW + timedelta(days=30))
    older = memory.supersede(later.id, "Alice lives in Madrid.", scope="u")
    [kept] = memory.store.get("u", [later.id])
    assert kept.valid_to is None and kept.superseded_by is None
    assert (older.superseded_by, older.valid_to) == (later.id, later.created_at)
    assert lived(memory, "u", as_of=NOW + timedelta(days=1)) == ["Madrid"]
    assert lived(memory, "u", as_of=NOW + timedelta(days=31)) == ["Berlin"]


def test_recorded_as_of_returns_what_the_memory_believed_on_a_date(store: Store) -> None:
    clock = Clock(NOW)
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False, clock=clock)
    memory.learn({"role": "user", "content": "I live in Madrid.", "at": MADRID}, scope="u")  # recorded at NOW
    clock.advance(days=10)
    memory.learn({"role": "user", "content": "I live in Berlin.", "at": BERLIN}, scope="u")  # recorded at NOW + 10 days
    clock.advance(days=10)
    memory.learn({"role": "user", "content": "I live in Paris.", "at": PARIS}, scope="u")  # recorded at NOW + 20 days
    madrid = by_city(memory, "u")["Madrid"]
    day = timedelta(days=1)

    def believed(on: datetime, **more: object) -> list[str]:
        return lived(memory, "u", as_of=more.pop("as_of", None), recorded_as_of=on, **more)  # type: ignore[arg-type]

    assert believed(NOW - day) == []  # nothing was recorded yet
    assert believed(NOW + day) == ["Madrid"]
    assert believed(NOW + 11 * day) == ["Berlin"]  # Madrid was superseded on day 10
    assert believed(NOW + 11 * day, as_of=PARIS + day) == []  # Paris was not known yet
    assert believed(NOW + 21 * day, as_of=PARIS + day) == ["Paris"]
    assert believed(NOW + 5 * day, as_of=BERLIN + day) == ["Madrid"]  # believed it still held
    assert believed(NOW + 11 * day, include_superseded=True) == ["Berlin", "Madrid"]
    hits = memory.search("where does the user live", scope="u", filters=SearchFilter(recorded_as_of=NOW + day))
    assert [h.memory.id for h in hits] == [madrid.id]
    then = SearchFilter(recorded_as_of=NOW + day)
    keyword = memory.search("user Madrid", scope="u", strategy="keyword", filters=then)
    assert [h.memory.id for h in keyword] == [madrid.id]
