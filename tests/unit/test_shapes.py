"""Each type `Memory` returns has one JSON shape (`memstrata.shapes`): a value survives the trip
domain object → JSON text → shape → domain object unchanged, which is what `MemoryClient` decodes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from memstrata import (
    ConsolidationReport,
    Context,
    ContextPart,
    DecisionKind,
    Entity,
    ErasureReceipt,
    EventType,
    HistoryEvent,
    ImportReport,
    JobStatus,
    LearnResult,
    MaintenanceReport,
    MemoryRecord,
    Operation,
    Procedure,
    ProfileFact,
    QueueStatus,
    Scope,
    SearchHit,
    SweepReport,
    Turn,
)
from memstrata.models import new_record
from memstrata.shapes import (
    ConsolidationReportJSON,
    ContextJSON,
    EntityJSON,
    ErasureReceiptJSON,
    HistoryEventJSON,
    ImportReportJSON,
    JobStatusJSON,
    LearnResultJSON,
    MaintenanceReportJSON,
    MemoryJSON,
    MemoryListJSON,
    OperationJSON,
    ProcedureJSON,
    ProfileFactJSON,
    QueueStatusJSON,
    SearchHitJSON,
    SweepReportJSON,
    TurnJSON,
    record_of,
    shape_of,
    to_json,
)

AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
SCOPE = Scope("acme:alice", agent_id="acme:bot", session_id="s-1")


def record(content: str = "Alice keeps bees", **changes: Any) -> MemoryRecord:
    made = new_record(scope=SCOPE, content=content, metadata={"src": "chat", "n": [1, 2]}, created_at=AT)
    return made.evolve(
        **{"valid_to": AT + timedelta(days=1), "superseded_by": "m2", "access_count": 3, "context": "q", **changes}
    )


def through_json(model: BaseModel) -> BaseModel:
    """`model` as JSON text and read back by its class, as a client reads a response."""
    text = model.model_dump_json()
    assert json.loads(text) == model.model_dump(mode="json")
    return type(model).model_validate_json(text)


def test_memory_record() -> None:
    original = record(source_ids=("a", "b"), pinned=True, last_accessed_at=AT, expires_at=AT + timedelta(days=9))
    decoded = through_json(MemoryJSON.of(original))
    assert isinstance(decoded, MemoryJSON) and record_of(decoded, SCOPE) == original


def test_memory_list_pages() -> None:
    records = [record(f"note {i}") for i in range(4)]
    page = MemoryListJSON.page(records, limit=3, offset=6)
    decoded = through_json(page)
    assert isinstance(decoded, MemoryListJSON)
    assert decoded.next_offset == 9 and decoded.to_domain(SCOPE) == records[:3]
    assert MemoryListJSON.page(records, limit=4, offset=0).next_offset is None


def test_search_hit() -> None:
    original = SearchHit(record(), 0.75, {"semantic": 0.5, "keyword": 0.25})
    decoded = through_json(SearchHitJSON.of(original))
    assert isinstance(decoded, SearchHitJSON) and decoded.superseded is True and decoded.to_domain(SCOPE) == original


def test_history_event() -> None:
    original = HistoryEvent("e1", "m1", "acme:alice", EventType.SUPERSEDE, AT, "old", "new", {"reason": "moved"})
    decoded = through_json(HistoryEventJSON.of(original))
    assert isinstance(decoded, HistoryEventJSON) and decoded.to_event("acme:alice") == original


def test_entity() -> None:
    original = Entity(
        "sarah",
        "Sarah",
        "person",
        AT,
        AT + timedelta(hours=1),
        4,
        "Alice's manager",
        ("sara",),
        {"team": "ml"},
        ("m1", "m2"),
        summary_built=True,
    )
    decoded = through_json(EntityJSON.of(original))
    assert isinstance(decoded, EntityJSON) and decoded.to_domain() == original


def test_profile_fact() -> None:
    original = ProfileFact("food", "diet", "vegetarian", AT, "mcp", ({"value": "vegan", "until": AT.isoformat()},))
    decoded = through_json(ProfileFactJSON.of(original))
    assert isinstance(decoded, ProfileFactJSON) and decoded.to_domain() == original


def test_procedure() -> None:
    memory = record("summaries: use bullets").evolve(metadata={"procedure_type": "instruction", "task": "summaries"})
    original = Procedure(memory)
    decoded = through_json(ProcedureJSON.of(original))
    assert isinstance(decoded, ProcedureJSON)
    assert (decoded.type, decoded.task, decoded.text) == ("instruction", "summaries", original.render())
    assert decoded.to_domain(SCOPE) == original


def test_context() -> None:
    parts = (ContextPart("profile", "- diet: vegetarian", 5, 1, 1), ContextPart("memories", "- bees", 3, 1, 4))
    original = Context("- diet: vegetarian\n- bees", 8, 100, parts, ("entities",))
    decoded = through_json(ContextJSON.of(original))
    assert isinstance(decoded, ContextJSON) and decoded.to_domain() == original


def test_learn_result_and_operation() -> None:
    operation = Operation(DecisionKind.SUPERSEDE, record(), ("m0",), "new value", "llm timed out")
    assert OperationJSON.model_validate_json(OperationJSON.of(operation).model_dump_json()).to_domain(SCOPE) == (
        operation
    )
    original = LearnResult((operation,), extractor="llm", fallback_reason="llm timed out")
    decoded = through_json(LearnResultJSON.of(original))
    assert isinstance(decoded, LearnResultJSON) and decoded.to_domain(SCOPE) == original


def test_consolidation_report() -> None:
    group = {"id": "g1", "kind": "note", "period": "2026-02", "agent_id": None, "replaces": 3}
    original = ConsolidationReport(
        "acme:alice",
        5,
        3,
        ("s1",),
        "extractive",
        None,
        (group,),
        refused=({**group, "reason": "empty"},),
        failed={**group, "position": 1, "error": "boom"},
    )
    decoded = through_json(ConsolidationReportJSON.of(original))
    assert isinstance(decoded, ConsolidationReportJSON) and decoded.to_domain("acme:alice") == original


def test_erasure_receipt() -> None:
    original = ErasureReceipt("r1", AT, "ab" * 32, "cd" * 16, "pbkdf2-sha256:600000", {"semantic": 3}, 12.5)
    decoded = through_json(ErasureReceiptJSON.of(original))
    assert isinstance(decoded, ErasureReceiptJSON) and decoded.to_domain() == original


def test_import_report() -> None:
    original = ImportReport("acme:alice", 4, 1, 7, 2, 0, "hashing:64", items_skipped=1)
    decoded = through_json(ImportReportJSON.of(original))
    assert isinstance(decoded, ImportReportJSON) and decoded.to_domain("acme:alice") == original


def test_sweep_report() -> None:
    original = SweepReport(users=2, expired=1, retention=2, sessions=1, by_user={"acme:alice": 4})
    decoded = through_json(SweepReportJSON.of(original))
    assert isinstance(decoded, SweepReportJSON) and decoded.to_domain() == original


def test_queue_and_job_status() -> None:
    failure = {"id": "j1", "user_id": "acme:alice", "status": "failed", "attempts": 3, "error": "x", "created_at": "t"}
    original = QueueStatus(counts={"pending": 2, "failed": 1}, failures=[failure])
    decoded = through_json(QueueStatusJSON.of(original))
    assert isinstance(decoded, QueueStatusJSON) and decoded.to_domain() == original
    job = JobStatus("j1", "failed", 3, "x", "t")
    assert JobStatusJSON.model_validate_json(JobStatusJSON.of(job).model_dump_json()).to_domain() == job


def test_turn() -> None:
    original = Turn("user", "I keep bees", AT, "m1", "Alice")
    decoded = through_json(TurnJSON.of(original))
    assert isinstance(decoded, TurnJSON) and decoded.to_domain() == original


@pytest.mark.parametrize(
    "value",
    [
        record(),
        SearchHit(record(), 0.5, {}),
        Procedure(record()),
        Turn("user", "hi", AT, "m1"),
        ImportReport("acme:alice", 1, 0, 1, 0, 0, "hashing:64"),
    ],
    ids=type,
)
def test_to_json_is_the_declared_shape(value: Any) -> None:
    model = shape_of(value)
    assert model is not None and to_json(value) == model.model_dump(mode="json")
    assert to_json([value]) == [model.model_dump(mode="json")]


def test_rename_maps_store_ids_to_the_readers_ids() -> None:
    shown = MemoryJSON.of(record(), lambda store_id: store_id.partition(":")[2])
    assert (shown.user_id, shown.agent_id) == ("alice", "bot")


def test_maintenance_report() -> None:
    sweep = SweepReport(users=1, expired=2, by_user={"acme:alice": 2})
    original = MaintenanceReport(sweep, {"acme:alice": ConsolidationReport("acme:alice", 10, 10, ("s1",), "llm")})
    decoded = through_json(MaintenanceReportJSON.of(original))
    assert isinstance(decoded, MaintenanceReportJSON) and decoded.to_domain() == original
