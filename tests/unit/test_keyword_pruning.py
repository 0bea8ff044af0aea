"""Search for big users: which keyword postings are ranked (`core.bm25.keyword_plan`, over the user's own
statistics), a big user's search next to another user, and both searches of a big user in one read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memstrata.core import bm25
from memstrata.core.bm25 import keyword_plan
from memstrata.core.keyword_index import lookup_terms
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import InvalidInput
from memstrata.models import Scope, new_record
from memstrata.storage import vector_index
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore
from memstrata.storage.sqlite_keyword import search_plan


def looked_up(store: SQLiteStore, user_id: str, words: list[str]) -> list[str]:
    """The terms a search of `words` by `user_id` ranks."""
    plan = store._read(lambda conn: search_plan(conn, user_id, lookup_terms(words), store.posting_budget))
    return [] if plan is None else plan.terms


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


def test_plan_keeps_every_word_in_small_stores() -> None:
    words = ["zebra", "user", "note"]
    assert keyword_plan(words, {"user": 4000, "note": 3000}, 4999) == words


def test_plan_drops_words_in_most_rows_and_looks_up_the_rarest_within_the_budget() -> None:
    frequencies = {"user": 60_000, "note": 1500, "zebra": 3, "walk": 900, "moon": 0}
    plan = keyword_plan(["user", "note", "zebra", "walk", "moon"], frequencies, 40_000, budget=2000)
    assert plan == ["zebra", "walk", "moon"]  # rarest first; "note" would pass the budget; "user" is uninformative


def test_plan_without_budget_keeps_every_informative_word() -> None:
    frequencies = {"user": 60_000, "note": 9000, "walk": 8000}
    plan = keyword_plan(["user", "note", "walk"], frequencies, 100_000, budget=None)
    assert plan == ["note", "walk"]


def test_plan_keeps_a_repeated_term_each_time() -> None:
    """Two query words with one stem are two phrases for FTS5, each ranked: the plan keeps both."""
    assert keyword_plan(["walk", "zebra", "walk"], {"walk": 10, "zebra": 5}, 100_000) == ["walk", "zebra", "walk"]


def test_plan_budget_grows_with_the_store() -> None:
    """4 % of half a million rows (20,000 postings) replaces a 2,000-row floor."""
    frequencies = {"a": 5000, "b": 9000, "c": 8000}
    assert keyword_plan(["a", "b", "c"], frequencies, 50_000, budget=2000) == ["a"]
    assert keyword_plan(["a", "b", "c"], frequencies, 500_000, budget=2000) == ["a", "c"]


def test_posting_budget_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="posting_budget"):
        SQLiteStore(tmp_path / "x.db", posting_budget=0)


def test_plan_always_keeps_the_rarest_word_even_over_budget() -> None:
    plan = keyword_plan(["note", "walk"], {"note": 9000, "walk": 8000}, 100_000)
    assert plan == ["walk"]


def test_a_small_user_of_a_big_store_looks_up_every_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruning follows the user's own memories, not the store's: a small user next to a big one
    looks up even a word that most of the store's rows hold."""
    monkeypatch.setattr(bm25, "PRUNE_FROM_ROWS", 50)
    store = SQLiteStore(tmp_path / "two.db", posting_budget=40)
    store.bind_embedder("none", 2)
    big = [new_record(scope=Scope("big"), content=f"walked in the park {i}") for i in range(200)]
    small = [new_record(scope=Scope("small"), content=f"park bench {i}") for i in range(5)]
    store.save("big", big, [], np.ones((200, 2), dtype=np.float32))
    store.save("small", small, [], np.ones((5, 2), dtype=np.float32))
    assert looked_up(store, "big", ["park", "bench"]) == ["bench"]  # "park" is in every one of big's rows
    assert looked_up(store, "small", ["park", "bench"]) == ["park", "bench"]
    assert len(store.keyword_search("small", "park", MemoryFilter(), limit=10)) == 5
    store.close()


def test_big_user_sees_only_own_rows(tmp_path: Path) -> None:
    """A big user's search ranks their own postings only, even where another user's rows match best."""
    store = SQLiteStore(tmp_path / "two.db")
    store.bind_embedder("none", 2)
    big, small = Scope("big"), Scope("small")
    big_records = [new_record(scope=big, content=f"walked the dog in the park {i}") for i in range(300)]
    # The small user's rows match best ("zebra" twice), so they fill the un-narrowed pool first.
    small_records = [new_record(scope=small, content=f"zebra zebra seen in the park {i}") for i in range(250)]
    store.save("big", big_records, [], np.ones((300, 2), dtype=np.float32))
    store.save("small", small_records, [], np.ones((250, 2), dtype=np.float32))
    hits = store.keyword_search("big", "zebra park", MemoryFilter(), limit=20)
    assert len(hits) == 20 and {h.record.user_id for h in hits} == {"big"}
    assert {h.record.user_id for h in store.keyword_search("small", "park", MemoryFilter(), limit=20)} == {"small"}
    store.close()


def test_hybrid_candidates_of_a_big_user_equal_the_two_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user past both thresholds: pruned keyword plan, two-stage vectors."""
    monkeypatch.setattr(bm25, "PRUNE_FROM_ROWS", 50)
    monkeypatch.setattr(vector_index, "TWO_STAGE_FROM_ROWS", 50)
    store = SQLiteStore(tmp_path / "big-user.db", posting_budget=40)
    store.bind_embedder("hashing", 64)
    scope = Scope("alice")
    embedder = HashingEmbedder(64)
    texts = [f"memory {i} about {'tea' if i % 3 else 'coffee'} and {'jazz' if i % 5 else 'rain'}" for i in range(200)]
    records = [new_record(scope=scope, content=t) for t in texts]
    store.save("alice", records, [], embedder.embed_documents(texts))
    vector = embedder.embed_query("coffee and rain")
    where = MemoryFilter(created_after=records[0].created_at)
    semantic, keyword = store.hybrid_candidates("alice", vector, "coffee rain", where, limit=25)
    assert store._vectors["alice"].two_stage and looked_up(store, "alice", ["coffee", "rain"]) == ["rain"]
    assert semantic == store.vector_search("alice", vector, where, limit=25)
    assert keyword == store.keyword_search("alice", "coffee rain", where, limit=25)
    assert len(semantic) == len(keyword) == 25
    store.close()
