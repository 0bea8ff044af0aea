"""The in-process vector index (exact and two-stage) and its cache coherence across stores sharing one file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from memstrata_bench.latency import model_vocabulary, synthetic_texts, zipf_weights

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.embedders.static import StaticEmbedder
from memstrata.models import EventType, MemoryKind, Scope, new_event, new_record
from memstrata.storage import vector_index
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore
from memstrata.storage.vector_index import UserVectorIndex, principal_rotation


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_upsert_grows_replaces_and_remove_swaps() -> None:
    index = UserVectorIndex(0, [], np.zeros((0, 2), dtype=np.float32))
    vectors = np.stack([unit(1, i + 1) for i in range(100)])
    index.upsert([f"m{i}" for i in range(100)], vectors)
    assert index.count == 100 and index.dimensions == 2
    index.upsert(["m5"], np.stack([unit(0, 1)]))
    assert np.allclose(index.matrix[index.positions["m5"]], unit(0, 1))
    index.remove(["m0", "m99", "missing"])
    assert index.count == 98 and "m0" not in index.positions
    for memory_id, row in index.positions.items():
        assert index.ids[row] == memory_id
    sims = index.similarities(unit(0, 1))
    assert index.ids[int(np.argmax(sims))] == "m5"


def test_two_stores_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    embed = HashingEmbedder(64)
    first, second = SQLiteStore(tmp_path / "shared.db"), SQLiteStore(tmp_path / "shared.db")
    scope = Scope("alice")

    def put(store: SQLiteStore, text: str) -> str:
        record = new_record(scope=scope, content=text)
        store.save("alice", [record], [new_event(record, EventType.ADD)], embed.embed_documents([text]))
        return record.id

    def top(store: SQLiteStore, text: str) -> list[str]:
        return [r.record.id for r in store.vector_search("alice", embed.embed_query(text), MemoryFilter(), limit=1)]

    tea = put(first, "green tea")
    assert top(first, "green tea") == [tea] == top(second, "green tea")
    coffee = put(second, "black coffee")
    assert top(first, "black coffee") == [coffee]
    put(first, "red wine")
    first.delete("alice", [coffee])
    assert top(second, "black coffee") != [coffee]
    first.close()
    second.close()


def test_principal_rotation_is_orthogonal_and_orders_axes_by_variance() -> None:
    rng = np.random.default_rng(3)
    data = (rng.standard_normal((500, 8)) * np.array([1, 9, 2, 7, 3, 5, 4, 6])).astype(np.float32)
    rotation = principal_rotation(data)
    assert np.allclose(rotation.T @ rotation, np.eye(8), atol=1e-5)
    rotated = data @ rotation
    variances = (rotated**2).mean(axis=0)
    assert list(variances) == sorted(variances, reverse=True)
    query = rng.standard_normal(8).astype(np.float32)
    assert np.allclose(rotated @ (query @ rotation), data @ query, rtol=1e-4, atol=1e-3)


def static_vectors(count: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(11)
    words = model_vocabulary()
    texts = synthetic_texts(rng, words, zipf_weights(len(words)), count)
    return texts, StaticEmbedder().embed_documents(texts)


def test_two_stage_search_finds_the_exact_best_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real model vectors, 3,000 rows, the head stage passing only 100 candidates (3 %) to rescoring."""
    monkeypatch.setattr(vector_index, "TWO_STAGE_FROM_ROWS", 1000)
    monkeypatch.setattr(vector_index, "MIN_CANDIDATES", 100)
    monkeypatch.setattr(vector_index, "CANDIDATES_PER_RESULT", 10)
    texts, vectors = static_vectors(3000)
    index = UserVectorIndex(0, [f"m{i}" for i in range(3000)], vectors)
    assert index.two_stage and np.allclose(index.matrix, vectors, atol=1e-5)
    queries = StaticEmbedder().embed_documents([" ".join(t.split()[:4]) for t in texts[:100]])
    recalls = []
    for query in queries:
        rows, scores = index.best(query, 10)
        exact = np.argsort(-(vectors @ query), kind="stable")[:10]
        assert np.allclose(scores, vectors[rows] @ query, atol=1e-5)  # the scores themselves are exact
        assert list(scores) == sorted(scores, reverse=True)
        recalls.append(len(set(rows) & set(exact)) / 10)
    assert np.mean(recalls) >= 0.97


def test_index_rotates_once_it_grows_big_and_keeps_every_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_index, "TWO_STAGE_FROM_ROWS", 200)
    _, vectors = static_vectors(300)
    index = UserVectorIndex(0, [], np.zeros((0, vectors.shape[1]), dtype=np.float32))
    index.upsert([f"m{i}" for i in range(150)], vectors[:150])
    assert not index.two_stage
    index.upsert([f"m{i}" for i in range(150, 300)], vectors[150:])
    assert index.two_stage and np.allclose(index.matrix, vectors, atol=1e-5)
    index.remove(["m0"])
    index.upsert(["m5"], vectors[7:8])
    assert np.allclose(index.matrix[index.positions["m5"]], vectors[7], atol=1e-5)
    assert np.allclose(index.similarities(vectors[7]), index.matrix @ vectors[7], atol=1e-5)


def test_filtered_vector_search_past_the_best_rows_in_two_stage_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Filters that reject most of the best rows send the search down the exact ranking."""
    monkeypatch.setattr(vector_index, "TWO_STAGE_FROM_ROWS", 100)
    texts, vectors = static_vectors(400)
    store = SQLiteStore(tmp_path / "two-stage.db")
    store.bind_embedder("static", vectors.shape[1])
    scope = Scope("alice")
    records = [
        new_record(scope=scope, content=t, kind=MemoryKind.NOTE if i % 40 == 0 else MemoryKind.FACT)
        for i, t in enumerate(texts)
    ]
    store.save("alice", records, [], vectors)
    query = vectors[123]
    notes = MemoryFilter(kinds=(MemoryKind.NOTE,))
    rows = store.vector_search("alice", query, notes, limit=5)
    assert store._vectors["alice"].two_stage
    wanted = sorted((i for i in range(400) if i % 40 == 0), key=lambda i: -float(vectors[i] @ query))[:5]
    assert [r.record.id for r in rows] == [records[i].id for i in wanted]
    assert [r.score for r in rows] == pytest.approx([float(vectors[i] @ query) for i in wanted], abs=1e-5)
    store.close()
