"""What LangGraph's stores promise, checked on memstrata and on LangGraph's own stores side by side.

Each behaviour comes from `langgraph.store.base` (docstrings of `BaseStore`, `PutOp`, `SearchOp`,
`ListNamespacesOp`, `TTLConfig`) and is asserted only as far as LangGraph's own stores agree on it:
where they differ (order of unranked results, unindexed items in a query search, `created_at` on
overwrite) the test says so and memstrata's choice is pinned in test_langgraph_store.py.
Every test runs per store and in sync and async mode (`StoreApi`).
"""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp

from .conftest import StoreApi, store_params

DOCS = ("docs", "guides")


@pytest.mark.parametrize("param", store_params())
def test_put_then_get_returns_the_item_with_its_fields(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "python", {"text": "Python tutorial", "stars": 5})
    item = api.get(DOCS, "python")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (DOCS, "python", {"text": "Python tutorial", "stars": 5})
    assert isinstance(item.created_at, datetime)
    assert isinstance(item.updated_at, datetime)
    assert item.updated_at >= item.created_at


@pytest.mark.parametrize("param", store_params())
def test_get_missing_returns_none(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "python", {"text": "Python tutorial"})
    assert api.get(DOCS, "rust") is None
    assert api.get(("docs", "other"), "python") is None
    assert api.get(("nowhere",), "python") is None


@pytest.mark.parametrize("param", store_params())
def test_put_overwrites_and_moves_updated_at(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "python", {"text": "Python tutorial"})
    first = api.get(DOCS, "python")
    time.sleep(1.05 if api.kind.name == "langgraph-sqlite" else 0.01)  # it keeps whole seconds
    api.put(DOCS, "python", {"text": "Python handbook"})
    second = api.get(DOCS, "python")
    assert second.value == {"text": "Python handbook"}
    assert second.updated_at > first.updated_at
    if api.kind.keeps_created_at:
        assert second.created_at == first.created_at
    assert len(api.search(DOCS)) == 1


@pytest.mark.parametrize("param", store_params())
def test_delete_removes_the_item_and_tolerates_missing_keys(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "python", {"text": "Python tutorial"})
    api.put(DOCS, "rust", {"text": "Rust book"})
    api.delete(DOCS, "python")
    api.delete(DOCS, "never-existed")
    assert api.get(DOCS, "python") is None
    assert [i.key for i in api.search(DOCS)] == ["rust"]


FILTER_CASES = [
    ({"lang": "python"}, {"py1", "py2"}),
    ({"lang": "python", "level": 2}, {"py2"}),
    ({"level": {"$gt": 1}}, {"py2", "rs1"}),
    ({"level": {"$gte": 2, "$lt": 3}}, {"py2"}),
    ({"level": {"$lte": 1}}, {"py1"}),
    ({"lang": {"$ne": "python"}}, {"rs1"}),
    ({"lang": {"$eq": "rust"}}, {"rs1"}),
    ({"lang": "cobol"}, set()),
]


@pytest.mark.parametrize("param", store_params())
def test_search_filters_on_value_fields(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "py1", {"text": "intro", "lang": "python", "level": 1})
    api.put(DOCS, "py2", {"text": "decorators", "lang": "python", "level": 2})
    api.put(DOCS, "rs1", {"text": "ownership", "lang": "rust", "level": 3})
    for filter, expected in FILTER_CASES:
        assert {i.key for i in api.search(DOCS, filter=filter)} == expected, filter


@pytest.mark.parametrize("param", store_params())
def test_search_scopes_to_the_namespace_prefix(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(("docs", "a"), "1", {"text": "one"})
    api.put(("docs", "b"), "2", {"text": "two"})
    api.put(("notes",), "3", {"text": "three"})
    assert {i.key for i in api.search(("docs",))} == {"1", "2"}
    assert {i.key for i in api.search(("docs", "a"))} == {"1"}
    assert {i.key for i in api.search(())} == {"1", "2", "3"}
    assert api.search(("doc",)) == []  # labels match whole, not as string prefixes
    assert {(i.namespace, i.key) for i in api.search(("docs",))} == {
        (("docs", "a"), "1"),
        (("docs", "b"), "2"),
    }


@pytest.mark.parametrize("param", store_params())
def test_search_pages_with_limit_and_offset(make_store, param) -> None:
    api: StoreApi = make_store(param)
    for n in range(5):
        api.put(DOCS, f"k{n}", {"text": f"document {n}"})
    pages = [api.search(DOCS, limit=2, offset=offset) for offset in (0, 2, 4, 6)]
    assert [len(p) for p in pages] == [2, 2, 1, 0]
    keys = [i.key for page in pages for i in page]
    assert sorted(keys) == [f"k{n}" for n in range(5)]  # each item exactly once
    assert len(api.search(DOCS)) == 5  # default limit is 10


@pytest.mark.parametrize("param", store_params(vectors=True))
def test_search_with_a_query_ranks_by_similarity_and_scores(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "tea", {"text": "green tea brewing guide"})
    api.put(DOCS, "python", {"text": "python programming tutorial"})
    api.put(DOCS, "garden", {"text": "growing tomatoes in a garden"})
    results = api.search(DOCS, query="python tutorial for programming")
    assert results[0].key == "python"
    assert all(isinstance(r.score, float) for r in results)
    assert results[0].score > 0.5
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert [r.key for r in api.search(DOCS, query="python tutorial", limit=1)] == ["python"]
    second = api.search(DOCS, query="python tutorial for programming", limit=1, offset=1)
    assert [r.key for r in second] == [results[1].key]


@pytest.mark.parametrize("param", store_params(vectors=True))
def test_query_pages_agree_with_the_full_ranking_with_several_vectors_per_item(make_store, param) -> None:
    api: StoreApi = make_store(param, fields=["tags[*]"])
    words = ["tea", "coffee", "python", "garden", "travel", "music", "books", "chess", "running", "cooking"]
    for n in range(40):
        tags = [f"{words[n % 10]} {words[(n * 3) % 10]}", f"{words[(n * 7) % 10]} note {n}"][: 1 + n % 2]
        api.put(DOCS, f"k{n:02d}", {"tags": tags})
    full = [(r.key, r.score) for r in api.search(DOCS, query="python chess", limit=100)]
    assert len(full) == 40 and all(score is not None for _, score in full)
    pages = [api.search(DOCS, query="python chess", limit=7, offset=offset) for offset in range(0, 42, 7)]
    assert [(r.key, r.score) for page in pages for r in page] == full


@pytest.mark.parametrize("param", store_params(vectors=True))
def test_query_search_combines_with_filter(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "py-beginner", {"text": "python tutorial", "level": "beginner"})
    api.put(DOCS, "py-expert", {"text": "python metaclasses tutorial", "level": "expert"})
    results = api.search(DOCS, query="python tutorial", filter={"level": "expert"})
    assert [r.key for r in results] == ["py-expert"]
    assert results[0].score is not None


@pytest.mark.parametrize("param", store_params(vectors=True))
def test_index_false_and_per_put_index_fields(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "hidden", {"text": "python tutorial"}, index=False)
    api.put(DOCS, "by-summary", {"text": "unrelated words", "summary": "python tutorial"}, index=["summary"])
    assert api.get(DOCS, "hidden").value == {"text": "python tutorial"}  # still reachable by get
    results = api.search(DOCS, query="python tutorial")
    assert results[0].key == "by-summary"
    assert results[0].score > 0.9
    # LangGraph's stores differ on unindexed items in a query search (InMemoryStore appends them
    # unscored, the SQL stores leave them out); both agree they never carry a score.
    assert all(r.score is None for r in results if r.key == "hidden")


@pytest.mark.parametrize("param", store_params())
def test_list_namespaces_with_prefix_suffix_depth_and_paging(make_store, param) -> None:
    api: StoreApi = make_store(param)
    # The example of BaseStore.list_namespaces' docstring.
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f")]:
        api.put(ns, "k", {"text": "x"})
    assert api.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert api.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert api.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert api.list_namespaces(prefix=("a",), suffix=("i",)) == [("a", "b", "d", "i")]
    assert api.list_namespaces(max_depth=1) == [("a",)]
    everything = api.list_namespaces()
    assert len(everything) == 5 and everything == sorted(everything)
    assert api.list_namespaces(limit=2, offset=1) == everything[1:3]
    assert api.list_namespaces(prefix=("z",)) == []
    api.delete(("a", "c", "f"), "k")
    if api.kind.name != "langgraph-inmemory":  # InMemoryStore keeps listing a namespace it emptied
        assert api.list_namespaces(suffix=("f",)) == [("a", "b", "f")]


@pytest.mark.parametrize("param", store_params())
def test_batch_reads_see_the_state_before_its_writes_and_last_put_wins(make_store, param) -> None:
    api: StoreApi = make_store(param)
    api.put(DOCS, "old", {"text": "before"})
    results = api.batch(
        [
            PutOp(DOCS, "new", {"text": "first"}),
            GetOp(DOCS, "new"),
            PutOp(DOCS, "new", {"text": "second"}),
            PutOp(DOCS, "old", None),
            GetOp(DOCS, "old"),
            SearchOp(DOCS),
        ]
    )
    assert results[0] is None and results[2] is None and results[3] is None
    assert results[1] is None  # the batch's own put is not visible to its get
    assert results[4].value == {"text": "before"}
    assert [i.key for i in results[5]] == ["old"]
    assert api.get(DOCS, "new").value == {"text": "second"}
    assert api.get(DOCS, "old") is None


@pytest.mark.parametrize("param", store_params())
def test_put_refuses_invalid_namespaces(make_store, param) -> None:
    api: StoreApi = make_store(param)
    for namespace in [(), ("a.b",), ("a", ""), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            api.put(namespace, "k", {"text": "x"})
    assert api.search(()) == []


@pytest.mark.parametrize("param", store_params(ttl=True))
def test_ttl_expires_items_and_reads_refresh_it(make_store, param) -> None:
    """TTLConfig: an item expires `ttl` minutes after its last access; reads refresh the timer
    unless refresh_ttl=False; expired items are deleted by the sweep (best effort)."""
    api: StoreApi = make_store(param, ttl={"refresh_on_read": True})
    ttl = 4 / 60  # 4 seconds; LangGraph's SQLite store counts whole seconds
    start = time.monotonic()
    for key in ("read", "unread", "peeked", "forever"):
        api.put(DOCS, key, {"text": key}, ttl=None if key == "forever" else ttl)
    time.sleep(max(0.0, 2.0 - (time.monotonic() - start)))
    assert api.get(DOCS, "read") is not None
    assert api.get(DOCS, "peeked", refresh_ttl=False) is not None
    time.sleep(max(0.0, 5.2 - (time.monotonic() - start)))
    api.sweep_ttl()
    assert api.get(DOCS, "read") is not None  # refreshed at 2 s: alive until ~6 s
    assert api.get(DOCS, "unread") is None
    assert api.get(DOCS, "peeked") is None
    assert api.get(DOCS, "forever") is not None
    assert {i.key for i in api.search(DOCS)} == {"read", "forever"}


@pytest.mark.parametrize("param", store_params(ttl=False))
def test_store_without_ttl_support_refuses_a_ttl(make_store, param) -> None:
    api: StoreApi = make_store(param)
    with pytest.raises(NotImplementedError):
        api.put(DOCS, "k", {"text": "x"}, ttl=1.0)


@pytest.mark.parametrize("param", store_params())
def test_batch_accepts_namespaces_under_the_langgraph_root(make_store, param) -> None:
    """Only the public `put` refuses ("langgraph", ...): LangGraph's own writes go through `batch`."""
    api: StoreApi = make_store(param)
    api.batch([PutOp(("langgraph", "internal"), "k", {"text": "kept by LangGraph"})])
    [found] = api.batch([GetOp(("langgraph", "internal"), "k")])
    assert found is not None and found.value == {"text": "kept by LangGraph"}


@pytest.mark.parametrize("param", [p for p in store_params() if "inmemory" not in p.id])
def test_dotted_filter_keys_are_nested_paths(make_store, param) -> None:
    """LangGraph's SQL stores read `{"user.level": 2}` as value["user"]["level"] (InMemoryStore does not)."""
    api: StoreApi = make_store(param)
    api.put(DOCS, "a", {"text": "a", "user": {"level": 2, "team": "core"}})
    api.put(DOCS, "b", {"text": "b", "user": {"level": 1, "team": "core"}})
    api.put(DOCS, "c", {"text": "c", "user": "flat"})
    assert [i.key for i in api.search(DOCS, filter={"user.level": 2})] == ["a"]
    assert sorted(i.key for i in api.search(DOCS, filter={"user.team": "core"})) == ["a", "b"]
    assert [i.key for i in api.search(DOCS, filter={"user.level": {"$lt": 2}})] == ["b"]
