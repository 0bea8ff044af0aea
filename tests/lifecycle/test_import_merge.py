"""Import merges with what the store holds without rewriting its history, in one write, on every store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstrata import InvalidInput, Memory, SearchFilter
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.storage.base import Store
from tests.support.clock import Clock

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
EVERYTHING = SearchFilter(include_superseded=True, include_expired=True)


@pytest.fixture
def memory(store: Store) -> Iterator[Memory]:
    yield Memory(store=store, embedder=HashingEmbedder(64), track_access=False, clock=Clock(NOW))


def said(memory: Memory, user: str, text: str, days: int) -> None:
    memory.learn({"role": "user", "content": text, "at": NOW - timedelta(days=days)}, scope=user)


def current(memory: Memory, user: str) -> list[str]:
    return sorted(r.content for r in memory.list(scope=user, limit=100))


def everything(memory: Memory, user: str) -> dict[str, Any]:
    """The user's whole export, without its time stamp: what an import must leave as it was."""
    return memory.export_user(scope=user).model_dump(mode="json", exclude={"exported_at"})


def test_reimporting_an_older_export_never_revives_a_superseded_memory(memory: Memory) -> None:
    said(memory, "u", "I live in Berlin.", days=30)
    older = memory.export_user(scope="u")
    said(memory, "u", "I moved to Rome.", days=10)
    assert current(memory, "u") == ["The user lives in Rome."]

    memory.import_user(older)

    assert current(memory, "u") == ["The user lives in Rome."]
    [berlin] = [r for r in memory.list(scope="u", filters=EVERYTHING) if "Berlin" in r.content]
    assert berlin.superseded_by is not None and berlin.valid_to == NOW - timedelta(days=10)


def test_reimporting_never_brings_back_a_forgotten_memory_or_its_text(memory: Memory) -> None:
    secret = memory.add("Alice's passport number is X1234567", scope="u")
    older = memory.export_user(scope="u")
    memory.forget(secret.id, scope="u")

    memory.import_user(older)

    assert memory.list(scope="u", filters=EVERYTHING) == []
    assert "X1234567" not in memory.export_user(scope="u").to_json()


def test_an_imported_value_older_than_the_stores_current_one_is_imported_as_its_history(memory: Memory) -> None:
    said(memory, "a", "I live in Berlin.", days=30)
    document = memory.export_user(scope="a")
    said(memory, "b", "I moved to Rome.", days=10)

    memory.import_user(document, scope="b")

    assert current(memory, "b") == ["The user lives in Rome."]
    by_text = {r.content: r for r in memory.list(scope="b", filters=EVERYTHING)}
    berlin, rome = by_text["The user lives in Berlin."], by_text["The user lives in Rome."]
    assert (berlin.superseded_by, berlin.valid_to) == (rome.id, NOW - timedelta(days=10))
    as_of = SearchFilter(as_of=NOW - timedelta(days=20))
    assert [r.content for r in memory.list(scope="b", filters=as_of)] == ["The user lives in Berlin."]


def test_an_imported_value_newer_than_the_stores_current_one_retires_it(memory: Memory) -> None:
    said(memory, "a", "I moved to Rome.", days=10)
    document = memory.export_user(scope="a")
    said(memory, "b", "I live in Berlin.", days=30)

    memory.import_user(document, scope="b")

    assert current(memory, "b") == ["The user lives in Rome."]
    [berlin] = [r for r in memory.list(scope="b", filters=EVERYTHING) if "Berlin" in r.content]
    assert berlin.valid_to == NOW - timedelta(days=10)
    assert [e.event.value for e in memory.history(berlin.id, scope="b")] == ["add", "supersede"]


def _document_with_events(memory: Memory) -> dict[str, Any]:
    said(memory, "src", "I live in Berlin.", days=30)
    said(memory, "src", "I moved to Rome.", days=10)
    document = memory.export_user(scope="src").model_dump(mode="json")
    assert len(document["history"]) >= 2
    return document


def test_history_ids_colliding_within_the_document_write_nothing_and_name_the_id(memory: Memory) -> None:
    document = _document_with_events(memory)
    first, second = document["history"][:2]
    second["id"] = first["id"]
    with pytest.raises(InvalidInput, match=f"history event id '{first['id']}'"):
        memory.import_user(document, scope="dst")
    assert everything(memory, "dst")["memories"] == []
    assert everything(memory, "dst")["history"] == []


def test_a_history_id_the_user_already_holds_for_another_event_writes_nothing(memory: Memory) -> None:
    memory.add("Dst keeps bees", scope="dst")
    before = everything(memory, "dst")
    document = _document_with_events(memory)
    document["history"][0]["id"] = before["history"][0]["id"]
    with pytest.raises(InvalidInput, match=f"history event id '{before['history'][0]['id']}'"):
        memory.import_user(document, scope="dst")
    assert everything(memory, "dst") == before


def test_an_import_failing_on_its_last_item_writes_none_of_its_memories(memory: Memory) -> None:
    document = _document_with_events(memory)
    document["items"] = [
        {"namespace": "profile", "key": "home:city", "value": {"value": "Rome"}, "updated_at": NOW.isoformat()},
        {"namespace": "profile", "key": "bad", "value": {"value": "nul \u0000 byte"}, "updated_at": NOW.isoformat()},
    ]
    with pytest.raises(InvalidInput):
        memory.import_user(document, scope="dst")
    after = everything(memory, "dst")
    assert (after["memories"], after["history"], after["items"]) == ([], [], [])
