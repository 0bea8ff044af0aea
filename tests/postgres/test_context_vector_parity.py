"""With `context_vector_weight` on, PostgreSQL and SQLite store the same context-mixed vectors, so a hybrid
search ranks alike on both (the bundled static embedder)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import Memory, NewMemory, Scope
from memstrata.models import MemoryKind
from memstrata.settings import Settings

pytestmark = pytest.mark.postgres

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
TURNS = [
    ("Melanie", "Did you finally visit the Eiffel Tower in Paris?"),
    ("Caroline", "Yes, it was amazing!"),
    ("Melanie", "I adopted a puppy from the shelter last week."),
    ("Caroline", "What breed is it? I love golden retrievers."),
    ("Melanie", "A beagle, he loves long walks in the park."),
]
QUERIES = ["Eiffel Tower Paris trip", "Which dog did Melanie adopt?", "walks in the park", "amazing visit"]


def _ranking(memory: Memory) -> dict[str, list[tuple[str, float]]]:
    items = [
        NewMemory(
            content=f"{who}: {text}",
            kind=MemoryKind.EPISODE,
            metadata={"speaker": who},
            created_at=T0,
            context=" ".join(f"{w}: {t}" for w, t in TURNS[max(0, i - 2) : i]),
            scope=Scope("u", session_id="s1"),
            source_ids=(f"D1:{i}",),
        )
        for i, (who, text) in enumerate(TURNS)
    ]
    memory.add_many(items, scope="u", dedupe=False)
    ranked = {}
    for query in QUERIES:
        hits = memory.search(query, scope="u", k=5)
        ranked[query] = [(h.memory.source_ids[0], round(h.scores.get("semantic", 0.0), 4)) for h in hits]
    return ranked


def test_both_stores_rank_alike_with_context_in_the_vectors(tmp_path: Path) -> None:
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import postgres_urls

    settings = Settings(context_vector_weight=1.0)
    with Memory(
        store=f"sqlite:///{tmp_path / 'm.db'}",
        embedder="static",
        clock=lambda: T0,
        track_access=False,
        settings=settings,
    ) as lite:
        expected = _ranking(lite)
    with (
        postgres_urls() as (app_url, owner_url),
        Memory(
            store=PostgresStore.open(app_url, owner_url=owner_url),
            embedder="static",
            clock=lambda: T0,
            track_access=False,
            settings=settings,
        ) as pg,
    ):
        found = _ranking(pg)
    assert found == expected
    assert expected["Eiffel Tower Paris trip"][0][0] in ("D1:0", "D1:1")
