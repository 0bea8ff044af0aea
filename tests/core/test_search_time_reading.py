"""A search reads the query's time expressions as English relates them, on every store: a season or year
named on its own, a period placed before a date, a range between two dates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import Memory, MemoryKind, NewMemory, Scope, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.storage.base import Store

NOW = datetime(2023, 12, 1, tzinfo=UTC)
TRIPS = {
    "summer-2021": ("I drove to the lake with my sister", datetime(2021, 7, 10, tzinfo=UTC)),
    "summer-2022": ("I drove to the lake with my sister", datetime(2022, 7, 10, tzinfo=UTC)),
    "winter-2022": ("I drove to the lake with my sister", datetime(2022, 12, 20, tzinfo=UTC)),
    "week-before": ("I drove to the lake with my sister", datetime(2023, 11, 10, tzinfo=UTC)),
}


@pytest.fixture
def memory(store: Store) -> Memory:
    m = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    m.add_many(
        [
            NewMemory(
                text, kind=MemoryKind.EPISODE, created_at=at, metadata={"trip": name}, scope=Scope("u", session_id=name)
            )
            for name, (text, at) in TRIPS.items()
        ],
        scope="u",
        dedupe=False,
    )
    return m


def matching(memory: Memory, query: str) -> set[str]:
    """The trips a search of `query` finds inside the period the query names (`time_match` 1.0); each
    trip is also matched by words, so every one is a hit."""
    hits = memory.search(query, scope="u", k=4, filters=SearchFilter(as_of=NOW))
    assert len(hits) == len(TRIPS)
    return {str(h.memory.metadata["trip"]) for h in hits if h.scores["time_match"] == 1.0}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("When did I drive to the lake in the summer of 2021?", "summer-2021", id="season-of-year"),
        pytest.param("Who did I drive to the lake with in 2021?", "summer-2021", id="bare-year"),
        pytest.param("Where did I drive the week before 17 November 2023?", "week-before", id="week-before"),
        pytest.param("Where did I drive between 1 June and 31 August 2022?", "summer-2022", id="between"),
        pytest.param("Where did I drive last winter?", "winter-2022", id="last-winter"),
    ],
)
def test_only_the_period_the_query_names_matches(memory: Memory, query: str, expected: str) -> None:
    assert matching(memory, query) == {expected}
