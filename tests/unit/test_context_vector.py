"""A memory's context pulls its stored vector (`SemanticMemory.context_weight`, `layers.context_vector`):
SQLite, the bundled static embedder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory, NewMemory, Scope
from memstrata.errors import InvalidInput
from memstrata.layers.context_vector import with_context
from memstrata.layers.semantic import SemanticMemory, Strategy
from memstrata.models import MemoryKind
from memstrata.settings import Settings

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
QUESTION = "Melanie: Did you finally visit the Eiffel Tower in Paris?"
ANSWER = "Caroline: Yes, it was amazing!"
OTHER = "Caroline: I adopted a puppy from the shelter last week."


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder="static", clock=lambda: T0, track_access=False)
    yield m
    m.close()


def _layer(memory: Memory, weight: float) -> SemanticMemory:
    return SemanticMemory(
        store=memory.store, embedder=memory.embedder, clock=memory.clock, track_access=False, context_weight=weight
    )


def _store_turns(layer: SemanticMemory, user: str) -> dict[str, str]:
    """Three turns of one session, each with the turn before it as context; content -> id."""
    turns = [(QUESTION, ""), (ANSWER, QUESTION), (OTHER, ANSWER)]
    items = [
        NewMemory(
            content=text, kind=MemoryKind.EPISODE, context=context, created_at=T0, scope=Scope(user, session_id="s1")
        )
        for text, context in turns
    ]
    return {r.content: r.id for r in layer.add_many(Scope(user), items, dedupe=False)}


def _similarity(layer: SemanticMemory, user: str, query: str) -> dict[str, float]:
    hits = layer.search(Scope(user), query, k=10, strategy=Strategy.SEMANTIC)
    return {h.memory.content: h.scores["semantic"] for h in hits}


def _stored_and_searched(memory: Memory, weight: float, user: str, query: str) -> dict[str, float]:
    layer = _layer(memory, weight)
    _store_turns(layer, user)
    return _similarity(layer, user, query)


def test_an_answer_is_found_by_the_question_it_answers(memory: Memory) -> None:
    query = "Eiffel Tower Paris trip"
    plain = _stored_and_searched(memory, 0.0, "plain", query)
    mixed = _stored_and_searched(memory, 1.0, "mixed", query)
    assert mixed[ANSWER] > plain[ANSWER] + 0.1  # the bare "Yes, it was amazing!" now carries what it answers
    assert mixed[QUESTION] == pytest.approx(plain[QUESTION], abs=1e-5)  # no context: its vector is unchanged
    assert mixed[ANSWER] < mixed[QUESTION]  # the turn's own words still weigh more than its context's


def test_the_stored_vector_is_the_mix_of_content_and_context(memory: Memory) -> None:
    layer = _layer(memory, 0.5)
    ids = _store_turns(layer, "u")
    content, context = memory.embedder.embed_documents([ANSWER]), memory.embedder.embed_documents([QUESTION])
    expected = with_context(content, context, [True], 0.5)[0]
    query = memory.embedder.embed_query(ANSWER).reshape(-1)
    found = _similarity(layer, "u", ANSWER)  # a vector search scores with the stored vectors
    assert found[ANSWER] == pytest.approx(float(expected @ query), abs=1e-5)
    assert memory.get(ids[ANSWER], scope="u").content == ANSWER  # the content stays the turn itself


def test_an_update_keeps_the_context_in_the_new_vector(memory: Memory) -> None:
    layer = _layer(memory, 1.0)
    ids = _store_turns(layer, "u")
    layer.update(Scope("u"), ids[ANSWER], content="Caroline: Yes, it was wonderful!")
    found = _similarity(layer, "u", "Eiffel Tower Paris trip")
    baseline = _stored_and_searched(memory, 0.0, "plain", "Eiffel Tower Paris trip")
    assert found["Caroline: Yes, it was wonderful!"] > baseline[ANSWER] + 0.1


def test_with_context_leaves_memories_without_context_alone() -> None:
    rng = np.random.default_rng(7)
    content = rng.normal(size=(3, 8)).astype(np.float32)
    content /= np.linalg.norm(content, axis=1, keepdims=True)
    context = rng.normal(size=(3, 8)).astype(np.float32)
    mixed = with_context(content, context, [True, False, True], 0.5)
    np.testing.assert_array_equal(mixed[1], content[1])
    np.testing.assert_allclose(np.linalg.norm(mixed, axis=1), 1.0, rtol=1e-5)
    assert not np.allclose(mixed[0], content[0])
    np.testing.assert_array_equal(with_context(content, context, [True] * 3, 0.0), content)


@pytest.mark.parametrize(("weight", "rows"), [(-0.1, 3), (0.5, 2)], ids=["negative-weight", "mask-of-the-wrong-length"])
def test_with_context_refuses_bad_input(weight: float, rows: int) -> None:
    content = np.eye(3, dtype=np.float32)
    with pytest.raises(InvalidInput):
        with_context(content, content, [True] * rows, weight)


def test_a_negative_context_weight_is_refused(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="context_weight"):
        _layer(memory, -1.0)


def test_the_setting_reaches_the_memories_a_memory_stores(tmp_path: Path) -> None:
    settings = Settings(context_vector_weight=1.0)
    with Memory(
        store=f"sqlite:///{tmp_path / 's.db'}",
        embedder="static",
        clock=lambda: T0,
        track_access=False,
        settings=settings,
    ) as m:
        m.add_many(
            [NewMemory(content=ANSWER, kind=MemoryKind.EPISODE, context=QUESTION, created_at=T0)],
            scope="u",
            dedupe=False,
        )
        hit = m.search("Eiffel Tower Paris trip", scope="u", k=1, strategy="semantic")[0]
    content, context = m.embedder.embed_documents([ANSWER]), m.embedder.embed_documents([QUESTION])
    expected = with_context(content, context, [True], 1.0)[0] @ m.embedder.embed_query("Eiffel Tower Paris trip")
    assert hit.scores["semantic"] == pytest.approx(float(expected), abs=1e-5)
