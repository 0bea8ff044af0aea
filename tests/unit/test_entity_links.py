"""Entities are linked to every memory that mentions them, with a summary built offline from those memories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.entities import summary_from


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(store=f"sqlite:///{tmp_path / 'e.db'}", embedder=HashingEmbedder(64), track_access=False) as m:
        yield m


def test_a_memory_mentioning_a_known_entity_is_linked_and_summarized(memory: Memory) -> None:
    sister = memory.learn("My sister's name is Sarah.", scope="u").memories[0]
    lunch = memory.learn("I had lunch with Sarah today.", scope="u").memories[0]
    tennis = memory.learn("Sarah and I play tennis on Sundays.", scope="u").memories[0]
    sarah = memory.entity("Sarah", scope="u")
    assert set(sarah.memory_ids) == {sister.id, lunch.id, tennis.id}
    assert sarah.summary_built and "lunch with Sarah" in sarah.summary and "tennis" in sarah.summary
    assert sarah.summary.startswith("Sarah and the user play tennis on Sundays.")  # newest first
    assert "play tennis" in memory.context("what about Sarah?", 2000, scope="u").text


def test_a_given_summary_is_kept(memory: Memory) -> None:
    memory.upsert_entity("Globex", scope="u", type="organization", summary="The user's employer since 2025.")
    memory.learn("I joined Globex.", scope="u")
    assert memory.entity("Globex", scope="u").summary == "The user's employer since 2025."


def test_summary_from_keeps_distinct_sentences_within_the_limit() -> None:
    texts = ["Ana lives in Porto", "ana lives in porto.", "Ana is a nurse.", "x" * 500]
    assert summary_from(texts) == "Ana lives in Porto. Ana is a nurse."
    assert summary_from(texts, limit=20) == "Ana lives in Porto."
