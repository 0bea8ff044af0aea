"""The vector side of a hybrid search leaves out the speakers' names the query names (SQLite, the bundled
static embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory, NewMemory, Scope
from memstrata.core.retrieval import HybridParams
from memstrata.layers.semantic import SemanticMemory, Strategy
from memstrata.models import MemoryKind

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
TURNS = [
    ("Caroline", "I painted a sunrise over the lake last weekend."),
    ("Melanie", "That sounds lovely! I went camping with the kids."),
    ("Caroline", "The support group meeting was really moving."),
    ("Melanie", "I have been practising the violin every evening."),
]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder="static", clock=lambda: T0, track_access=False)
    items = [
        NewMemory(
            content=f"{who}: {text}",
            kind=MemoryKind.EPISODE,
            metadata={"speaker": who},
            created_at=T0,
            scope=Scope("u", session_id="s1"),
        )
        for who, text in TURNS
    ]
    m.add_many(items, scope="u", dedupe=False)
    yield m
    m.close()


def _cosines(memory: Memory, query: str) -> dict[str, float]:
    vector = np.asarray(memory.embedder.embed_query(query), dtype=np.float32).reshape(-1)
    docs = {r.content: r for r in memory.list(scope="u")}
    matrix = np.asarray(memory.embedder.embed_documents(list(docs)), dtype=np.float32)
    return {docs[text].id: float(score) for text, score in zip(docs, matrix @ vector, strict=True)}


def _semantic_scores(memory: Memory, query: str, params: HybridParams) -> dict[str, float]:
    layer = SemanticMemory(
        store=memory.store, embedder=memory.embedder, clock=memory.clock, track_access=False, params=params
    )
    hits = layer.search(Scope("u"), query, k=10, strategy=Strategy.HYBRID)
    return {h.memory.id: h.scores["semantic"] for h in hits if "semantic" in h.scores}


def test_the_vector_side_searches_without_the_named_speaker(memory: Memory) -> None:
    query = "What did Caroline paint at the lake?"
    scores = _semantic_scores(memory, query, HybridParams())
    plain, named = _cosines(memory, "What did paint at the lake?"), _cosines(memory, query)
    assert scores and scores == pytest.approx({i: plain[i] for i in scores}, abs=1e-5)
    assert any(abs(plain[i] - named[i]) > 1e-3 for i in scores)  # the name did change the query's vector


@pytest.mark.parametrize(
    ("query", "params"),
    [
        pytest.param("What did Caroline paint at the lake?", HybridParams(plain_vector_query=False), id="switched-off"),
        pytest.param("What did Caroline paint at the lake?", HybridParams(speaker_boost=0.0), id="no-speaker-boost"),
        pytest.param("What did Carol paint at the lake?", HybridParams(), id="names-no-speaker"),
    ],
)
def test_the_whole_query_is_embedded_otherwise(memory: Memory, query: str, params: HybridParams) -> None:
    scores = _semantic_scores(memory, query, params)
    whole = _cosines(memory, query)
    assert scores and scores == pytest.approx({i: whole[i] for i in scores}, abs=1e-5)


def test_a_users_speakers_are_remembered_and_the_next_search_embeds_the_plain_query_at_once(memory: Memory) -> None:
    layer = SemanticMemory(store=memory.store, embedder=memory.embedder, clock=memory.clock, track_access=False)
    query = "What did Melanie practise in the evening?"
    plain = _cosines(memory, "What did practise in the evening?")
    for _ in range(2):  # first: found among the candidates; then: known before the store is read
        hits = layer.search(Scope("u"), query, k=10)
        scores = {h.memory.id: h.scores["semantic"] for h in hits if "semantic" in h.scores}
        assert scores and scores == pytest.approx({i: plain[i] for i in scores}, abs=1e-5)
    assert layer._speakers["u"] == {"Caroline", "Melanie"}


def test_erasing_a_user_drops_the_speakers_remembered_for_them(memory: Memory) -> None:
    layer = memory._layers.semantic
    memory.search("What did Melanie practise in the evening?", scope="u")
    assert layer._speakers["u"] == {"Caroline", "Melanie"}
    memory.erase_user(scope="u")
    assert "u" not in layer._speakers
