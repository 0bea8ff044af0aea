"""memstrata's own choices for its LangGraph store: the namespace mapping, vectors as memories,
created_at kept on overwrite, expired items never returned, configuration errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from memstrata import ConfigurationError, InvalidInput, Memory, SearchFilter
from memstrata.aio import AsyncMemory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.integrations.langgraph import MemstrataStore
from memstrata.integrations.langgraph_items import ITEM_NAMESPACE, SHARED_OWNER, owners_for_prefix
from memstrata.integrations.langgraph_query import matches_condition, matches_filter
from tests.support.clock import Clock

ALICE = ("users", "alice", "memories")
BOB = ("users", "bob", "memories")


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
def memory(tmp_path: Path, clock: Clock):
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64), clock=clock) as memory:
        yield memory


@pytest.fixture
def store(memory: Memory) -> MemstrataStore:
    return MemstrataStore(memory, index={"fields": ["text"]})


def test_user_namespaces_are_that_users_memories(store: MemstrataStore, memory: Memory) -> None:
    store.put(ALICE, "pref", {"text": "I prefer short answers"})
    store.put(BOB, "pref", {"text": "I prefer long detailed answers"})
    [hit] = memory.search("short answers", scope="alice", k=5)
    assert hit.memory.content == "I prefer short answers"
    assert hit.memory.kind == "note"
    assert hit.memory.metadata == {
        "source": "langgraph",
        "langgraph_namespace": "users/alice/memories",
        "langgraph_key": "pref",
        "langgraph_path": "text",
    }
    assert [h.memory.content for h in memory.search("answers", scope="bob", k=5)] == ["I prefer long detailed answers"]
    assert memory.store.get_item("alice", ITEM_NAMESPACE, '["users","alice","memories","pref"]') is not None


def test_other_namespaces_belong_to_a_shared_owner_no_user_sees(store: MemstrataStore, memory: Memory) -> None:
    store.put(("docs",), "python", {"text": "python tutorial"})
    assert memory.search("python tutorial", scope="alice", k=5) == []
    assert [r.record.content for r in memory.store.keyword_search(SHARED_OWNER, "python", _any(), limit=5)] == [
        "python tutorial"
    ]
    assert store.get(("docs",), "python") is not None


def _any():
    from memstrata.storage.base import MemoryFilter

    return MemoryFilter()


def test_erasing_a_user_erases_their_langgraph_items(store: MemstrataStore, memory: Memory) -> None:
    store.put(ALICE, "pref", {"text": "I prefer short answers"})
    store.put(BOB, "pref", {"text": "I prefer long answers"})
    memory.store.erase_user("alice")
    assert store.get(ALICE, "pref") is None
    assert store.search(("users",), query="answers") != []
    assert {i.namespace for i in store.search(("users",))} == {BOB}


def test_a_user_id_memstrata_refuses_is_an_error(store: MemstrataStore) -> None:
    with pytest.raises(InvalidInput, match="user id in namespace"):
        store.put(("users", "not a valid id"), "k", {"text": "x"})
    with pytest.raises(InvalidInput):
        store.put(("users", "_system"), "k", {"text": "x"})  # reserved owners cannot be addressed


def test_custom_user_labels(memory: Memory) -> None:
    store = MemstrataStore(memory, index={"fields": ["text"]}, user_labels=("memories",))
    store.put(("memories", "carol"), "k", {"text": "Carol likes green tea"})
    assert [h.memory.content for h in memory.search("green tea", scope="carol")] == ["Carol likes green tea"]


def test_overwrite_keeps_created_at_and_replaces_vectors(store: MemstrataStore, memory: Memory, clock: Clock) -> None:
    store.put(ALICE, "doc", {"text": "green tea", "tags": ["brewing", "leaves"]}, index=["text", "tags[*]"])
    first = store.get(ALICE, "doc")
    assert len(memory.list(scope="alice", filters=SearchFilter(kinds="note"))) == 3  # text, tags.0, tags.1
    clock.advance(minutes=5)
    store.put(ALICE, "doc", {"text": "black coffee"})
    second = store.get(ALICE, "doc")
    assert second.created_at == first.created_at
    assert second.updated_at == first.updated_at + timedelta(minutes=5)
    assert [r.content for r in memory.list(scope="alice", filters=SearchFilter(kinds="note"))] == ["black coffee"]
    assert memory.search("green tea leaves brewing", scope="alice", strategy="keyword") == []
    store.delete(ALICE, "doc")
    assert memory.list(scope="alice", filters=SearchFilter(kinds="note")) == []


def test_vector_history_records_updates(store: MemstrataStore, memory: Memory) -> None:
    store.put(ALICE, "doc", {"text": "green tea"})
    store.put(ALICE, "doc", {"text": "black tea"})
    [record] = memory.list(scope="alice", filters=SearchFilter(kinds="note"))
    assert [(e.event, e.before, e.after) for e in memory.history(record.id, scope="alice")] == [
        ("add", None, "green tea"),
        ("update", "green tea", "black tea"),
    ]


def test_default_index_embeds_the_whole_value(memory: Memory) -> None:
    store = MemstrataStore(memory)
    store.put(ALICE, "k", {"food": "pizza", "drink": "lemonade"})
    [record] = memory.list(scope="alice", filters=SearchFilter(kinds="note"))
    assert record.content == '{"drink": "lemonade", "food": "pizza"}'
    assert store.search(ALICE, query="lemonade")[0].score >= 0.5


def test_index_false_store_ignores_queries(memory: Memory) -> None:
    store = MemstrataStore(memory, index=False)
    store.put(ALICE, "k", {"text": "green tea"})
    assert memory.list(scope="alice", filters=SearchFilter(kinds="note")) == []
    [result] = store.search(ALICE, query="green tea")
    assert result.score is None


def test_unindexed_items_follow_scored_ones_in_a_query_search(store: MemstrataStore, clock: Clock) -> None:
    store.put(ALICE, "plain", {"text": "green tea"}, index=False)
    clock.advance(seconds=1)
    store.put(ALICE, "indexed", {"text": "coffee beans"})
    assert [(r.key, r.score is None) for r in store.search(ALICE, query="green tea")] == [
        ("indexed", False),
        ("plain", True),
    ]


def test_search_without_query_is_newest_first(store: MemstrataStore, clock: Clock) -> None:
    for key in ("a", "b", "c"):
        store.put(ALICE, key, {"text": key})
        clock.advance(seconds=1)
    store.put(ALICE, "a", {"text": "a again"})
    assert [i.key for i in store.search(ALICE)] == ["a", "c", "b"]


@pytest.mark.parametrize(
    ("index", "error", "match"),
    [
        pytest.param({"embed": "openai:text-embedding-3-small"}, ConfigurationError, "embedder", id="embed"),
        pytest.param({"dims": 1536}, ConfigurationError, "1536", id="dims"),
        pytest.param({"fields": ["text", ""]}, InvalidInput, "JSON paths", id="empty-field"),
        pytest.param({"fields": ["a"], "text_fields": ["b"]}, ConfigurationError, "not both", id="two-field-lists"),
    ],
)
def test_index_config_errors(memory: Memory, index, error, match) -> None:
    with pytest.raises(error, match=match):
        MemstrataStore(memory, index=index)


def test_values_must_be_json(store: MemstrataStore) -> None:
    with pytest.raises(InvalidInput, match="JSON"):
        store.put(ALICE, "k", {"when": datetime.now(UTC)})


def test_expired_items_are_never_returned_and_sweep_deletes_them(
    store: MemstrataStore, memory: Memory, clock: Clock
) -> None:
    store.put(ALICE, "short", {"text": "green tea"}, ttl=10)
    store.put(ALICE, "long", {"text": "black tea"}, ttl=60)
    clock.advance(minutes=8)
    assert store.get(ALICE, "short") is not None  # refreshes: now expires at minute 18
    clock.advance(minutes=9)
    assert {i.key for i in store.search(ALICE, refresh_ttl=False)} == {"long", "short"}
    clock.advance(minutes=2)  # minute 19
    assert store.get(ALICE, "short") is None  # expired, not swept yet: still never returned
    assert [i.key for i in store.search(ALICE, query="tea")] == ["long"]
    assert store.list_namespaces() == [ALICE]
    notes = memory.list(scope="alice", filters=SearchFilter(kinds="note", as_of=clock.now))
    assert [r.content for r in notes] == ["black tea"]  # the expired item's vector is hidden too
    assert store.sweep_ttl() == 1
    assert [
        r.content for r in memory.list(scope="alice", filters=SearchFilter(kinds="note", include_expired=True))
    ] == ["black tea"]
    clock.advance(minutes=61)
    assert store.sweep_ttl() == 1
    assert store.list_namespaces() == []


def test_default_ttl_from_config(memory: Memory, clock: Clock) -> None:
    store = MemstrataStore(memory, ttl={"default_ttl": 1, "refresh_on_read": False})
    store.put(ALICE, "k", {"text": "x"})
    clock.advance(seconds=30)
    assert store.get(ALICE, "k") is not None  # no refresh
    clock.advance(seconds=31)
    assert store.get(ALICE, "k") is None


def test_ttl_sweeper_thread_starts_and_stops(store: MemstrataStore) -> None:
    future = store.start_ttl_sweeper(sweep_interval_minutes=60)
    assert store.stop_ttl_sweeper(timeout=5)
    assert not future.done() or future.cancelled()
    assert store.stop_ttl_sweeper() is True  # idempotent


def test_items_survive_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    with Memory(store=url, embedder=HashingEmbedder(64)) as first:
        MemstrataStore(first, index={"fields": ["text"]}).put(ALICE, "pref", {"text": "I prefer short answers"})
    with Memory(store=url, embedder=HashingEmbedder(64)) as second:
        [hit] = MemstrataStore(second, index={"fields": ["text"]}).search(ALICE, query="short answers")
        assert hit.value == {"text": "I prefer short answers"}


def test_async_memory_and_batch_ops(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncMemory(store=f"sqlite:///{tmp_path / 'a.db'}", embedder=HashingEmbedder(64)) as memory:
            store = MemstrataStore(memory, index={"fields": ["text"]})
            await store.abatch([PutOp(ALICE, "a", {"text": "green tea"}), PutOp(BOB, "b", {"text": "coffee"})])
            got, found, spaces = await store.abatch(
                [
                    GetOp(ALICE, "a"),
                    SearchOp(("users",), query="green tea", limit=1),
                    ListNamespacesOp((MatchCondition("prefix", ("users", "*")),), max_depth=2),
                ]
            )
            assert got.value == {"text": "green tea"}
            assert [(i.namespace, i.key) for i in found] == [(ALICE, "a")]
            assert spaces == [("users", "alice"), ("users", "bob")]
            assert await memory.search("green tea", scope="alice") != []

    anyio.run(main)


@pytest.mark.parametrize(
    ("value", "filter", "expected"),
    [
        pytest.param({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, True, id="nested-subset"),
        pytest.param({"a": [1, 2]}, {"a": [1, 2]}, True, id="list-equal"),
        pytest.param({"a": [1, 2]}, {"a": [2, 1]}, False, id="list-order"),
        pytest.param({"a": "10"}, {"a": {"$gt": 9}}, False, id="string-vs-number"),
        pytest.param({"a": "b"}, {"a": {"$gt": "a"}}, True, id="strings-ordered"),
        pytest.param({}, {"a": {"$ne": 1}}, True, id="missing-ne"),
        pytest.param({"a": True}, {"a": {"$gt": 0}}, False, id="bool-not-number"),
    ],
)
def test_filter_semantics(value, filter, expected) -> None:
    assert matches_filter(value, filter) is expected


def test_unknown_filter_operator_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="unsupported filter operator"):
        matches_filter({"a": 1}, {"a": {"$regex": "x"}})


@pytest.mark.parametrize(
    ("namespace", "kind", "path", "expected"),
    [
        pytest.param(("a", "b", "c"), "prefix", ("a", "*"), True, id="prefix-wildcard"),
        pytest.param(("a", "b", "c"), "suffix", ("*", "c"), True, id="suffix-wildcard"),
        pytest.param(("a",), "prefix", ("a", "b"), False, id="too-short"),
        pytest.param(("a", "b"), "suffix", ("a",), False, id="suffix-mismatch"),
    ],
)
def test_namespace_conditions(namespace, kind, path, expected) -> None:
    assert matches_condition(namespace, kind, path) is expected


@pytest.mark.parametrize(
    ("prefix", "user", "all_users", "shared"),
    [
        pytest.param((), None, True, True, id="everything"),
        pytest.param(("users",), None, True, True, id="users-label"),
        pytest.param(("users", "*"), None, True, False, id="users-wildcard"),
        pytest.param(("users", "alice", "x"), "alice", False, False, id="one-user"),
        pytest.param(("docs",), None, False, True, id="shared"),
        pytest.param(("*", "alice"), None, True, True, id="leading-wildcard"),
    ],
)
def test_owners_for_prefix(prefix, user, all_users, shared) -> None:
    owners = owners_for_prefix(prefix)
    assert (owners.user, owners.all_users, owners.shared) == (user, all_users, shared)


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.documents: list[list[str]] = []

    def embed_documents(self, texts, /):  # type: ignore[no-untyped-def]
        self.documents.append(list(texts))
        return super().embed_documents(texts)


def test_rewriting_the_same_text_reuses_its_vector(tmp_path: Path, clock: Clock) -> None:
    embedder = CountingEmbedder()
    with Memory(store=f"sqlite:///{tmp_path / 'c.db'}", embedder=embedder, clock=clock) as memory:
        store = MemstrataStore(memory, index={"fields": ["text", "title"]})
        store.put(ALICE, "k", {"text": "green tea", "title": "Tea", "views": 1})
        store.put(ALICE, "k", {"text": "green tea", "title": "Teas", "views": 2}, ttl=5)
        assert embedder.documents == [["green tea", "Tea"], ["Teas"]]
        [record] = [
            r
            for r in memory.list(scope="alice", filters=SearchFilter(kinds="note", as_of=clock.now))
            if r.content == "green tea"
        ]
        assert record.expires_at == clock.now + timedelta(minutes=5)
        assert [e.event for e in memory.history(record.id, scope="alice")] == ["add"]
        assert store.search(ALICE, query="green tea")[0].value["views"] == 2


def test_a_batch_is_validated_before_anything_is_written(store: MemstrataStore) -> None:
    with pytest.raises(InvalidInput, match="cannot index 'text'"):
        store.batch([PutOp(ALICE, "ok", {"text": "fine"}), PutOp(ALICE, "big", {"text": "x" * 70_000})])
    assert store.get(ALICE, "ok") is None


# -- opened as LangGraph's stores are ----------------------------------------------------------
def test_from_conn_string_embeds_only_the_text_fields(tmp_path: Path) -> None:
    from .conftest import DIMENSIONS, HashingEmbeddings

    index = {"embed": HashingEmbeddings(), "dims": DIMENSIONS, "text_fields": ["text"]}
    with MemstrataStore.from_conn_string(str(tmp_path / "lg.db"), index=index) as store:  # type: ignore[arg-type]
        store.setup()
        store.put(ALICE, "tea", {"text": "Alice drinks green tea", "secret": "her PIN is 4321"})
        vectors = store.memory.list(scope="alice", filters=SearchFilter(kinds="note"))
        assert [v.content for v in vectors] == ["Alice drinks green tea"]  # not the whole value
        assert store.memory.embedder.name == f"langchain:HashingEmbeddings:{DIMENSIONS}"
        assert store.search(ALICE, query="green tea")[0].key == "tea"


def test_from_conn_string_takes_an_embedding_function(tmp_path: Path) -> None:
    inner = HashingEmbedder(32)

    def embed(texts: list[str]) -> list[list[float]]:
        return inner.embed_documents(texts).tolist()

    with MemstrataStore.from_conn_string(
        f"sqlite:///{tmp_path / 'fn.db'}", index={"embed": embed, "dims": 32}
    ) as store:
        store.put(ALICE, "k", {"text": "Alice runs on Sundays"})
        assert store.search(ALICE, query="Sunday runs")[0].key == "k"


@pytest.mark.parametrize(
    ("index", "match"),
    [
        pytest.param({"embed": HashingEmbedder(8).embed_documents}, "needs 'dims'", id="no-dims"),
        pytest.param({"embed": lambda texts: [[1.0, 0.0]] * len(texts), "dims": 3}, "expected", id="wrong-dims"),
        pytest.param({"dims": 8, "distance_type": "l2", "embed": lambda t: [[1.0] * 8] * len(t)}, "cosine", id="l2"),
    ],
)
def test_from_conn_string_index_errors(tmp_path: Path, index: dict, match: str) -> None:
    opened = MemstrataStore.from_conn_string(str(tmp_path / "bad.db"), index=index)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=match), opened as store:  # the error comes on open or on put
        store.put(ALICE, "k", {"text": "x"})


def test_embed_other_than_the_memorys_embedder_is_refused(memory: Memory) -> None:
    with pytest.raises(ConfigurationError, match="from_conn_string"):
        MemstrataStore(memory, index={"embed": HashingEmbedder(64).embed_documents, "dims": 64})  # type: ignore[typeddict-item]
