"""The store contract: every backend (SQLite, PostgreSQL) must pass every test here."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import EmbeddingMismatch, InvalidInput, MemstrataError
from memstrata.models import EventType, MemoryKind, MemoryRecord, Scope, new_event, new_record
from memstrata.storage.base import (
    GenerationRead,
    ItemRead,
    ItemsRead,
    MemoriesRead,
    MemoryFilter,
    Store,
    read_each,
)

EMBED = HashingEmbedder(64)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE, BOB = Scope("alice"), Scope("bob")


def put(store: Store, scope: Scope, text: str, **fields: object) -> MemoryRecord:
    created = fields.pop("created_at", T0)
    record = new_record(scope=scope, content=text, created_at=created)  # type: ignore[arg-type]
    record = replace(record, **fields)  # type: ignore[arg-type]
    store.save(scope.user_id, [record], [new_event(record, EventType.ADD, after=text)], EMBED.embed_documents([text]))
    return record


def ids(rows: list) -> list[str]:
    return [getattr(r, "record", r).id for r in rows]


def test_save_then_get_round_trips_every_field(store: Store) -> None:
    record = put(
        store,
        Scope("alice", agent_id="bot", session_id="s1"),
        "Alice lives in Paris",
        kind=MemoryKind.FACT,
        metadata={"topic": "home", "n": 3},
        importance=0.8,
        expires_at=T0 + timedelta(days=400),
        source_ids=("m1", "m2"),
        pinned=True,
    )
    [got] = store.get("alice", [record.id])
    assert got == record


def test_get_ignores_unknown_ids_and_keeps_order(store: Store) -> None:
    a, b = put(store, ALICE, "first"), put(store, ALICE, "second")
    assert ids(store.get("alice", [b.id, "nope", a.id])) == [b.id, a.id]


def test_other_users_rows_are_invisible(store: Store) -> None:
    record = put(store, ALICE, "Alice's secret plan about tea")
    assert store.get("bob", [record.id]) == []
    assert store.list_memories("bob", MemoryFilter()) == []
    assert store.keyword_search("bob", "secret tea", MemoryFilter(), limit=5) == []
    assert store.vector_search("bob", EMBED.embed_query("secret tea"), MemoryFilter(), limit=5) == []
    assert store.delete("bob", [record.id]) == 0
    assert ids(store.get("alice", [record.id])) == [record.id]


def test_metadata_cannot_smuggle_another_user(store: Store) -> None:
    put(store, BOB, "bob's note", metadata={"user_id": "alice"})
    crafted = MemoryFilter(metadata={"user_id": "alice"})
    assert store.list_memories("alice", crafted) == []
    assert store.keyword_search("alice", "' OR 1=1 --", MemoryFilter(), limit=5) == []


def test_save_is_atomic_and_refuses_foreign_records(store: Store) -> None:
    mine = new_record(scope=ALICE, content="mine")
    theirs = new_record(scope=BOB, content="theirs")
    with pytest.raises(InvalidInput):
        store.save("alice", [mine, theirs], [], EMBED.embed_documents(["mine", "theirs"]))
    assert store.get("alice", [mine.id]) == []
    assert store.get("bob", [theirs.id]) == []


def test_vector_count_mismatch_is_refused(store: Store) -> None:
    record = new_record(scope=ALICE, content="x")
    with pytest.raises(MemstrataError):
        store.save("alice", [record], [], EMBED.embed_documents(["x", "y"]))
    with pytest.raises(EmbeddingMismatch):
        store.save("alice", [record], [], np.ones((1, 3), dtype=np.float32))
    assert store.get("alice", [record.id]) == []


def test_bind_embedder_refuses_another_model(store: Store) -> None:
    store.bind_embedder("hashing-64", 64)
    with pytest.raises(EmbeddingMismatch, match="hashing-64"):
        store.bind_embedder("other-model", 64)
    with pytest.raises(EmbeddingMismatch):
        store.bind_embedder("hashing-64", 32)


def test_list_filters(store: Store) -> None:
    fact = put(store, ALICE, "fact one", kind=MemoryKind.FACT, metadata={"topic": "food", "flag": True})
    pref = put(
        store,
        ALICE,
        "pref one",
        kind=MemoryKind.PREFERENCE,
        metadata={"topic": "music"},
        created_at=T0 + timedelta(days=2),
    )
    sess = put(store, Scope("alice", agent_id="a1", session_id="s9"), "session one", created_at=T0 + timedelta(days=5))
    everything = MemoryFilter()
    assert ids(store.list_memories("alice", everything)) == [sess.id, pref.id, fact.id]
    assert ids(store.list_memories("alice", everything, newest_first=False)) == [fact.id, pref.id, sess.id]
    assert ids(store.list_memories("alice", MemoryFilter(kinds=(MemoryKind.PREFERENCE,)))) == [pref.id]
    assert ids(store.list_memories("alice", MemoryFilter(metadata={"topic": "food"}))) == [fact.id]
    assert ids(store.list_memories("alice", MemoryFilter(metadata={"flag": True}))) == [fact.id]
    assert ids(store.list_memories("alice", MemoryFilter(session_id="s9"))) == [sess.id]
    assert ids(store.list_memories("alice", MemoryFilter(agent_id="a1"))) == [sess.id]
    window = MemoryFilter(created_after=T0 + timedelta(days=1), created_before=T0 + timedelta(days=3))
    assert ids(store.list_memories("alice", window)) == [pref.id]
    assert ids(store.list_memories("alice", everything, limit=1, offset=1)) == [pref.id]
    assert store.count_memories("alice", everything) == 3
    assert ids(store.list_memories("alice", MemoryFilter(content_hashes=(fact.content_hash,)))) == [fact.id]


def test_superseded_and_expired_are_hidden_unless_asked(store: Store) -> None:
    now = datetime.now(UTC)
    old = put(store, ALICE, "Alice lives in Paris", valid_to=now - timedelta(days=1), superseded_by="x")
    expired = put(store, ALICE, "temporary code 1234", expires_at=now - timedelta(hours=1))
    current = put(store, ALICE, "Alice lives in Berlin")
    assert ids(store.list_memories("alice", MemoryFilter())) == [current.id]
    assert set(ids(store.list_memories("alice", MemoryFilter(include_superseded=True)))) == {current.id, old.id}
    assert set(ids(store.list_memories("alice", MemoryFilter(include_expired=True)))) == {current.id, expired.id}
    past = MemoryFilter(as_of=now - timedelta(days=2))
    assert old.id in ids(store.list_memories("alice", past))
    assert old.id not in ids(store.keyword_search("alice", "Paris", MemoryFilter(), limit=5))
    assert old.id in ids(store.keyword_search("alice", "Paris", past, limit=5))
    q = EMBED.embed_query("Alice lives in Paris")
    assert old.id not in ids(store.vector_search("alice", q, MemoryFilter(), limit=5))
    assert ids(store.vector_search("alice", q, MemoryFilter(include_superseded=True), limit=1)) == [old.id]


def test_vector_search_orders_by_cosine_and_respects_limit_and_filter(store: Store) -> None:
    tea = put(store, ALICE, "green tea with jasmine", kind=MemoryKind.PREFERENCE)
    put(store, ALICE, "the car needs new tyres")
    coffee = put(store, ALICE, "strong black coffee tea", kind=MemoryKind.FACT)
    rows = store.vector_search("alice", EMBED.embed_query("green tea jasmine"), MemoryFilter(), limit=2)
    assert ids(rows)[0] == tea.id and len(rows) == 2
    assert rows[0].score == pytest.approx(1.0, abs=1e-5)
    assert rows[0].score >= rows[1].score
    only_facts = store.vector_search(
        "alice", EMBED.embed_query("green tea jasmine"), MemoryFilter(kinds=(MemoryKind.FACT,)), limit=5
    )
    assert coffee.id in ids(only_facts) and tea.id not in ids(only_facts)


def test_vector_search_sees_writes_and_deletes(store: Store) -> None:
    q = EMBED.embed_query("penguins in antarctica")
    assert store.vector_search("alice", q, MemoryFilter(), limit=3) == []
    record = put(store, ALICE, "penguins in antarctica")
    assert ids(store.vector_search("alice", q, MemoryFilter(), limit=3)) == [record.id]
    store.delete("alice", [record.id])
    assert store.vector_search("alice", q, MemoryFilter(), limit=3) == []


def test_keyword_search_stems_and_ranks(store: Store) -> None:
    run = put(store, ALICE, "Alice runs marathons every spring")
    put(store, ALICE, "Bob bakes bread")
    rows = store.keyword_search("alice", "running a marathon?", MemoryFilter(), limit=5)
    assert ids(rows) == [run.id]
    assert rows[0].score > 0
    assert store.keyword_search("alice", "the and of", MemoryFilter(), limit=5) == []
    assert store.keyword_search("alice", 'AND OR NOT "(*', MemoryFilter(), limit=5) == []


def test_keyword_search_matches_context_and_date_but_ranks_content_first(store: Store) -> None:
    reply = put(
        store,
        ALICE,
        "Bob: Yes, we won it!",
        context="Alice: Did your team win the chess trophy?",
        created_at=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    )
    direct = put(store, ALICE, "Alice: the chess trophy is on my shelf", created_at=datetime(2023, 6, 1, tzinfo=UTC))
    rows = store.keyword_search("alice", "chess trophy", MemoryFilter(), limit=5)
    assert ids(rows) == [direct.id, reply.id]
    assert [r.record.context for r in rows][1] == "Alice: Did your team win the chess trophy?"
    assert ids(store.keyword_search("alice", "what happened on 8 May 2023", MemoryFilter(), limit=1)) == [reply.id]


def test_keyword_ranking_of_one_user_ignores_other_users(store: Store) -> None:
    """Isolation of ranking: BM25's statistics (memories, average length, memories per term) are the
    user's own, so another user's memories added to the same store change neither the order nor the
    score of any of this user's hits, not even for words the other user holds everywhere."""
    alice_texts = [
        "Alice adopted a rescue greyhound named Pepper last spring",
        "Alice runs along the river every Saturday morning",
        "The greyhound rescue holds an open day at the river park",
        "Alice is learning to bake sourdough bread",
        "Pepper the dog sleeps on Alice's sofa after their runs",
        "Alice's sister visits in June for the river festival",
    ]
    for number, text in enumerate(alice_texts):
        put(store, ALICE, text, created_at=T0 + timedelta(days=number))
    queries = ["greyhound rescue", "river runs on Saturday", "Alice's dog Pepper", "sourdough bread", "festival"]
    before = {
        q: [(r.record.id, r.score) for r in store.keyword_search("alice", q, MemoryFilter(), limit=10)] for q in queries
    }
    for number in range(40):  # bob's words crowd every query term, with other lengths
        put(store, BOB, f"river river greyhound rescue bread festival Saturday dog {number} " * (1 + number % 3))
    for query in queries:
        after = [(r.record.id, r.score) for r in store.keyword_search("alice", query, MemoryFilter(), limit=10)]
        assert [i for i, _ in after] == [i for i, _ in before[query]], query
        assert [s for _, s in after] == pytest.approx([s for _, s in before[query]], rel=1e-9), query
    assert all(before[q] for q in queries)


def test_keyword_search_filters(store: Store) -> None:
    put(store, ALICE, "jazz concert tickets", kind=MemoryKind.EVENT)
    note = put(store, ALICE, "jazz records to buy", kind=MemoryKind.NOTE)
    rows = store.keyword_search("alice", "jazz", MemoryFilter(kinds=(MemoryKind.NOTE,)), limit=5)
    assert ids(rows) == [note.id]


def test_hybrid_candidates_are_the_two_searches_in_one_read(store: Store) -> None:
    put(store, ALICE, "jazz concert tickets for Friday", kind=MemoryKind.EVENT)
    put(store, ALICE, "green tea with jasmine")
    put(store, ALICE, "jazz records to buy", kind=MemoryKind.NOTE)
    put(store, BOB, "jazz festival in Montreal")
    where = MemoryFilter(kinds=(MemoryKind.EVENT, MemoryKind.NOTE))
    vector = EMBED.embed_query("jazz tickets")
    semantic, keyword = store.hybrid_candidates("alice", vector, "jazz tickets", where, limit=5)
    assert semantic == store.vector_search("alice", vector, where, limit=5)
    assert keyword == store.keyword_search("alice", "jazz tickets", where, limit=5)
    assert len(semantic) == 2 and len(keyword) == 2
    assert store.hybrid_candidates("alice", vector, "the and of", MemoryFilter(), limit=5)[1] == []
    assert store.hybrid_candidates("nobody", vector, "jazz", MemoryFilter(), limit=5) == ([], [])


def test_delete_scrubs_history_text_and_appends_event(store: Store) -> None:
    record = put(store, ALICE, "my PIN is 4321")
    tombstone = replace(new_event(record, EventType.DELETE), before=None, after=None)
    assert store.delete("alice", [record.id], [tombstone]) == 1
    assert store.get("alice", [record.id]) == []
    events = store.history("alice", record.id)
    assert [e.event for e in events] == [EventType.ADD, EventType.DELETE]
    assert all(e.before is None and e.after is None for e in events)
    assert store.keyword_search("alice", "PIN 4321", MemoryFilter(), limit=5) == []


def test_history_is_ordered_and_scoped(store: Store) -> None:
    record = put(store, ALICE, "v1")
    v2 = replace(record, content="v2")
    store.save("alice", [v2], [new_event(v2, EventType.UPDATE, before="v1", after="v2")], EMBED.embed_documents(["v2"]))
    events = store.history("alice", record.id)
    assert [(e.event, e.before, e.after) for e in events] == [
        (EventType.ADD, None, "v1"),
        (EventType.UPDATE, "v1", "v2"),
    ]
    assert store.history("bob", record.id) == []
    assert len(store.all_history("alice")) == 2


def test_update_without_vectors_keeps_vector(store: Store) -> None:
    record = put(store, ALICE, "blue whales sing")
    store.save("alice", [replace(record, importance=0.9)])
    rows = store.vector_search("alice", EMBED.embed_query("blue whales sing"), MemoryFilter(), limit=1)
    assert ids(rows) == [record.id] and rows[0].record.importance == 0.9


def test_save_with_fewer_vectors_keeps_the_rest(store: Store) -> None:
    old = put(store, ALICE, "Alice lives in Paris")
    new = new_record(scope=ALICE, content="Alice lives in Berlin")
    retired = replace(old, valid_to=datetime.now(UTC), superseded_by=new.id)
    store.save("alice", [new, retired], [], EMBED.embed_documents([new.content]))
    q = EMBED.embed_query("Alice lives in Paris")
    rows = store.vector_search("alice", q, MemoryFilter(include_superseded=True), limit=1)
    assert ids(rows) == [old.id] and rows[0].score == pytest.approx(1.0, abs=1e-5)
    assert ids(store.vector_search("alice", q, MemoryFilter(), limit=1)) == [new.id]
    with pytest.raises(MemstrataError):
        store.save("alice", [new], [], EMBED.embed_documents(["a", "b"]))


def test_record_access_persists(store: Store) -> None:
    record = put(store, ALICE, "access me")
    at = T0 + timedelta(days=3)
    store.record_access("alice", [record.id], at)
    store.record_access("alice", [record.id], at)
    [got] = store.get("alice", [record.id])
    assert got.access_count == 2 and got.last_accessed_at == at


def test_access_statistics_survive_rewrites_and_go_with_deletes(store: Store) -> None:
    record = put(store, ALICE, "read me often")
    at = T0 + timedelta(days=1)
    store.record_access("alice", [record.id], at)
    [read] = store.get("alice", [record.id])
    store.save("alice", [replace(read, content="read me often, please")])  # a rewrite carries the count
    store.record_access("alice", [record.id, "no-such-memory"], at + timedelta(hours=1))
    [got] = store.get("alice", [record.id])
    assert (got.content, got.access_count, got.last_accessed_at) == (
        "read me often, please",
        2,
        at + timedelta(hours=1),
    )
    assert [r.access_count for r in store.list_memories("alice", MemoryFilter())] == [2]
    store.record_access("bob", [record.id], at)  # another user's call touches nothing
    assert store.get("alice", [record.id])[0].access_count == 2
    store.delete("alice", [record.id])
    assert store.get("alice", [record.id]) == []
    again = put(store, ALICE, "read me often")  # a new memory starts from its own count
    assert store.get("alice", [again.id])[0].access_count == 0


def test_items_crud_and_isolation(store: Store) -> None:
    item = store.put_item("alice", "profile", "location", {"value": "Berlin"})
    assert item.value == {"value": "Berlin"}
    store.put_item("alice", "profile", "location", {"value": "Paris"})
    store.put_item("alice", "profile", "employer", {"value": "ACME"})
    got = store.get_item("alice", "profile", "location")
    assert got is not None and got.value == {"value": "Paris"}
    assert {i.key for i in store.list_items("alice", "profile")} == {"location", "employer"}
    assert store.get_item("bob", "profile", "location") is None
    assert store.list_items("bob", "profile") == []
    assert store.delete_item("bob", "profile", "location") is False
    assert store.delete_item("alice", "profile", "location") is True
    assert store.get_item("alice", "profile", "location") is None


def test_erase_user_removes_everything_of_that_user_only(store: Store) -> None:
    record = put(store, ALICE, "alice marker zqx")
    store.put_item("alice", "entity", "sarah", {"name": "Sarah"})
    bob_record = put(store, BOB, "bob keeps this")
    store.put_item("bob", "entity", "tom", {"name": "Tom"})
    counts = store.erase_user("alice")
    assert counts["memories"] == 1 and counts["items"] == 1 and counts["history"] == 1
    assert store.get("alice", [record.id]) == []
    assert store.all_history("alice") == []
    assert store.list_items("alice", "entity") == []
    assert "alice" not in store.user_ids()
    assert ids(store.get("bob", [bob_record.id])) == [bob_record.id]
    assert len(store.list_items("bob", "entity")) == 1
    assert ids(store.keyword_search("bob", "keeps", MemoryFilter(), limit=3)) == [bob_record.id]


def test_user_ids_lists_users_with_data(store: Store) -> None:
    put(store, ALICE, "a")
    store.put_item("carol", "profile", "k", {"v": 1})
    assert {"alice", "carol"} <= set(store.user_ids())


def test_read_many_answers_each_read_as_its_single_read_method(store: Store) -> None:
    first = put(store, ALICE, "Alice likes tea", kind=MemoryKind.PREFERENCE)
    second = put(store, ALICE, "Alice went to Porto", created_at=T0 + timedelta(days=1))
    put(store, BOB, "Bob likes coffee", kind=MemoryKind.PREFERENCE)
    store.put_item("alice", "profile", "identity:name", {"value": "Alice"})
    store.put_item("alice", "profile", "home:city", {"value": "Lisbon"})
    store.put_item("bob", "profile", "identity:name", {"value": "Bob"})
    reads = [
        ItemRead("profile", "identity:name"),
        ItemRead("profile", "missing"),
        ItemsRead("profile"),
        ItemsRead("profile", limit=1),
        MemoriesRead(MemoryFilter()),
        MemoriesRead(MemoryFilter(kinds=(MemoryKind.PREFERENCE,)), limit=1),
        MemoriesRead(MemoryFilter(), limit=1, offset=1, newest_first=False),
        GenerationRead(),
    ]
    answers = store.read_many("alice", reads)
    assert answers == read_each(store, "alice", reads)
    name, missing, profile, newest, memories, preference, page, generation = answers
    assert (name.value, missing, generation) == ({"value": "Alice"}, None, 0)
    assert [i.key for i in profile] == ["home:city", "identity:name"] and [i.key for i in newest] == ["home:city"]
    assert ids(memories) == [second.id, first.id] and ids(preference) == [first.id] and ids(page) == [second.id]
    assert [i.value for i in store.read_many("bob", reads[2:3])[0]] == [{"value": "Bob"}]
    assert store.read_many("alice", []) == []
    with pytest.raises(InvalidInput):
        store.read_many("alice", [GenerationRead(), ItemsRead("profile", limit=-1)])
    store.erase_user("alice")
    assert store.read_many("alice", reads) == [None, None, [], [], [], [], [], 1]


def test_every_store_implements_the_whole_protocol(store: Store) -> None:
    # The erasure fence and the user locks call these on any store: none is optional.
    assert isinstance(store, Store)


def test_erasure_generation_counts_erasures_of_that_user_only(store: Store) -> None:
    assert store.erasure_generation("alice") == 0
    put(store, ALICE, "alice before")
    store.erase_user("alice")
    assert store.erasure_generation("alice") == 1
    assert store.erasure_generation("bob") == 0
    put(store, ALICE, "alice again")
    store.erase_user("alice")
    assert store.erasure_generation("alice") == 2


def test_user_lock_is_per_user_and_released_on_exit(store: Store) -> None:
    taken: list[str] = []

    def take(user_id: str) -> None:
        with store.user_lock(user_id):
            taken.append(user_id)

    with store.user_lock("alice"):
        other = threading.Thread(target=take, args=("bob",))  # another user's lock is free meanwhile
        other.start()
        other.join(10)
        assert taken == ["bob"]
    with pytest.raises(RuntimeError), store.user_lock("alice"):
        raise RuntimeError("the locked work failed")
    again = threading.Thread(target=take, args=("alice",))  # released, also after a failure
    again.start()
    again.join(10)
    assert taken == ["bob", "alice"]


def test_compact_leaves_the_data_in_place(store: Store) -> None:
    record = put(store, ALICE, "kept through compaction")
    forgotten = put(store, ALICE, "forgotten before compaction")
    store.delete("alice", [forgotten.id])
    report = store.compact()
    assert isinstance(report, dict) and report
    assert ids(store.get("alice", [record.id, forgotten.id])) == [record.id]
