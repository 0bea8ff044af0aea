"""Export / import (GDPR Art. 15 and 20): round trips, idempotence, SQLite ↔ Postgres, documented format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memstrata import EventType, InvalidInput, MemoryKind, NewMemory, Scope
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.export_format import VERSION, ExportDocument, ExportedEvent, ExportedItem, ExportedMemory, ExportSource
from tests.lifecycle.conftest import T0, Backend, Clock, LifecycleMemory

USER = "alice"
QUERIES = ["hiking with Dana", "tea", "where does Alice work", "Porto", "passport number"]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "export-format.md"


def populate(memory: Any) -> None:
    """Current, updated, superseded, forgotten, expired and compressed memories, and items."""
    memory.add_many(
        [
            NewMemory(
                f"Alice hiked trail {i} with Dana",
                kind=MemoryKind.EVENT,
                created_at=T0 - timedelta(days=60, hours=i),
                source_ids=(f"D1:{i}",),
            )
            for i in range(10)
        ],
        scope=USER,
    )
    memory.consolidate(scope=USER)
    work = memory.add("Alice works at Initech", scope=USER, metadata={"source": "chat", "confidence": 0.9})
    memory.supersede(work.id, "Alice works at Globex", scope=USER)
    tea = memory.add("Alice prefers green tea", scope=USER, kind="preference", importance=0.8, pinned=True)
    memory.update(tea.id, scope=USER, content="Alice prefers jasmine tea")
    gone = memory.add("Alice's passport number is X1234567", scope=USER)
    memory.forget(gone.id, scope=USER)
    memory.add("Alice visits Porto in May", scope=Scope(USER, agent_id="travel", session_id="s1"), kind="event")
    memory.add("Alice's temporary code 8841", scope=USER, expires_at=T0 + timedelta(days=1))
    memory.set_fact("home", "city", "Lisbon", scope=USER)
    memory.upsert_entity("Dana", scope=USER, type="person", summary="hiking friend", attributes={"city": "Porto"})
    memory.store.put_item(USER, "context", "user", {"facts": ["works at Globex"], "last_topics": ["tea"]})
    memory.store.put_item(USER, "queue", "job-1", {"kind": "extract", "status": "pending"})
    memory.store.put_item(USER, "langgraph", '["users", "alice", "prefs"]', {"value": {"theme": "dark"}})


def searches(memory: Any) -> list[list[tuple[str, float]]]:
    return [
        [(h.memory.id, round(h.score, 6)) for h in memory.search(q, scope=USER, k=10, strategy=strategy)]
        for q in QUERIES
        for strategy in ("semantic", "keyword", "hybrid")
    ]


def comparable(document: ExportDocument) -> dict[str, Any]:
    data = document.model_dump(mode="json", exclude={"exported_at", "source"})
    for item in data["items"]:
        item.pop("updated_at")  # stores stamp items when they are written
    return data


def importable(document: ExportDocument) -> dict[str, Any]:
    """What an import restores: everything but queued jobs (work to run, never imported)."""
    data = comparable(document)
    data["items"] = [item for item in data["items"] if item["namespace"] != "queue"]
    return data


def open_memory(backend: Backend, clock: Clock) -> Any:
    return LifecycleMemory(store=backend.store, embedder=HashingEmbedder(64), clock=clock, track_access=False)


@pytest.mark.parametrize("name", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_export_erase_import_round_trip(name: str, backends: Callable[[str], Backend], clock: Clock) -> None:
    memory = open_memory(backends(name), clock)
    populate(memory)
    memory.add("Bob likes chess", scope="bob")
    results, history = searches(memory), memory.store.all_history(USER)
    document = memory.export_user(scope=USER)
    text = document.to_json()

    memory.erase_user(scope=USER)
    assert memory.search("tea", scope=USER) == []
    report = memory.import_user(text)

    assert (report.memories_written, report.memories_unchanged) == (len(document.memories), 0)
    queued = [item for item in document.items if item.namespace == "queue"]
    assert report.events_written == len(document.history)
    assert (report.items_written, report.items_skipped) == (len(document.items) - len(queued), len(queued))
    assert searches(memory) == results
    assert memory.store.all_history(USER) == history
    assert comparable(memory.export_user(scope=USER)) == importable(document)
    assert [r.content for r in memory.list(scope="bob")] == ["Bob likes chess"]


def test_import_twice_changes_nothing(memory: Any) -> None:
    populate(memory)
    document = memory.export_user(scope=USER)
    memory.erase_user(scope=USER)
    memory.import_user(document)
    rows = memory.export_user(scope=USER)
    again = memory.import_user(document)
    assert (again.memories_written, again.events_written, again.items_written) == (0, 0, 0)
    assert again.memories_unchanged == len(document.memories)
    assert again.items_unchanged + again.items_skipped == len(document.items)
    assert memory.export_user(scope=USER).model_dump(exclude={"exported_at"}) == rows.model_dump(
        exclude={"exported_at"}
    )


def test_import_into_a_live_store_only_adds_what_is_missing(memory: Any) -> None:
    populate(memory)
    document = memory.export_user(scope=USER)
    extra = memory.add("Alice adopted a cat", scope=USER)
    report = memory.import_user(document)
    assert report.memories_written == 0 and report.events_written == 0
    assert extra.id in {r.id for r in memory.list(scope=USER, limit=100)}


@pytest.mark.postgres
@pytest.mark.parametrize(("source", "target"), [("sqlite", "postgres"), ("postgres", "sqlite")])
def test_import_into_the_other_store_type(
    source: str, target: str, backends: Callable[[str], Backend], clock: Clock
) -> None:
    origin = open_memory(backends(source), clock)
    populate(origin)
    document = origin.export_user(scope=USER)
    destination = open_memory(backends(target), clock)
    report = destination.import_user(document.to_json())
    assert report.memories_written == len(document.memories)
    assert comparable(destination.export_user(scope=USER)) == importable(document)
    assert destination.store.all_history(USER) == origin.store.all_history(USER)
    for query in QUERIES:  # the same vectors: the same semantic scores on both backends (ties in any order)
        want = sorted(
            (round(h.score, 5), h.memory.id) for h in origin.search(query, scope=USER, k=50, strategy="semantic")
        )
        got = sorted(
            (round(h.score, 5), h.memory.id) for h in destination.search(query, scope=USER, k=50, strategy="semantic")
        )
        assert got == want, query
    assert document.source.store == ("sqlite" if source == "sqlite" else "postgresql")


def test_import_re_embeds_with_the_target_model_and_can_rename(make_memory: Callable[..., Any]) -> None:
    origin = make_memory("a")
    populate(origin)
    document = origin.export_user(scope=USER)
    assert document.source.embedder == "hashing-64" and document.source.dimensions == 64
    target = make_memory("b", embedder=HashingEmbedder(32))
    report = target.import_user(document, scope="alice2")
    assert report.embedder == "hashing-32"
    assert [h.memory.content for h in target.search("jasmine tea", scope="alice2", k=1)] == [
        "Alice prefers jasmine tea"
    ]
    assert target.export_user(scope=USER).counts == {"memories": 0, "history": 0, "items": 0}


def test_hand_written_document_gets_import_events(memory: Any) -> None:
    document = {
        "format": "memstrata-export",
        "version": 1,
        "user_id": "carol",
        "exported_at": "2026-01-01T00:00:00+00:00",
        "source": {"store": "sqlite", "embedder": "other", "dimensions": 3, "memstrata_version": "0.1.0"},
        "memories": [
            {
                "id": "m1",
                "kind": "fact",
                "content": "Carol likes figs",
                "created_at": "2025-12-01T10:00:00+00:00",
                "updated_at": "2025-12-01T10:00:00+00:00",
            }
        ],
    }
    memory.import_user(json.dumps(document))
    [event] = memory.history("m1", scope="carol")
    assert event.event is EventType.IMPORT and event.after == "Carol likes figs"
    assert memory.import_user(document).events_written == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"version": 3}, "version 3 is not supported", id="future-version"),
        pytest.param({"format": "mem0"}, "format", id="other-format"),
        pytest.param({"user_id": "_system"}, "invalid user_id", id="reserved-user"),
        pytest.param({"exported_at": "2026-01-01T00:00:00"}, "UTC offset", id="naive-time"),
        pytest.param({"memories": [{"id": "m1"}]}, "memories.0.kind", id="incomplete-memory"),
    ],
)
def test_invalid_documents_are_refused(memory: Any, change: dict[str, Any], message: str) -> None:
    document = memory.export_user(scope=USER).model_dump(mode="json") | change
    with pytest.raises(InvalidInput, match=message):
        memory.import_user(document)


def test_export_format_doc_documents_every_field() -> None:
    """docs/export-format.md names every field of every model of the format, and its version."""
    text = DOCS.read_text(encoding="utf-8")
    assert re.search(rf"^Version: {VERSION}$", text, re.MULTILINE)
    for model in (ExportDocument, ExportSource, ExportedMemory, ExportedEvent, ExportedItem):
        for field in model.model_fields:
            assert f"`{field}`" in text, f"docs/export-format.md does not document {model.__name__}.{field}"
