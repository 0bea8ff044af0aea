"""The in-process vector index and its cache coherence across store instances sharing one file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import EventType, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore
from memstrata.storage.vector_index import UserVectorIndex


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
