"""Bitemporal memory: ingesting a chat log out of order ends in the same current state as in order."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.storage.base import Store

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
