"""SQLite keyword search leaves out words found in more than half of all rows (their BM25 weight is ~0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memstrata.models import Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore


def test_common_words_are_pruned_only_in_large_stores(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "big.db")
    store.bind_embedder("none", 2)
    scope = Scope("alice")
    texts = [f"the user wrote note {i}" for i in range(6000)] + [f"the user saw a zebra {i}" for i in range(3)]
    records = [new_record(scope=scope, content=t) for t in texts]
    store.save("alice", records[:10], [], np.ones((10, 2), dtype=np.float32))
    assert len(store.keyword_search("alice", "user", MemoryFilter(), limit=5)) == 5  # small: kept
    store.save("alice", records[10:], [], np.ones((len(records) - 10, 2), dtype=np.float32))
    hits = store.keyword_search("alice", "did the user see a zebra", MemoryFilter(), limit=5)
    assert sorted(h.record.content for h in hits) == [f"the user saw a zebra {i}" for i in range(3)]
    assert store.keyword_search("alice", "user", MemoryFilter(), limit=5) == []
    store.close()
