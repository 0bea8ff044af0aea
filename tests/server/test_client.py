"""`MemoryClient` against a running server: Memory's methods and return types, errors as memstrata errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstrata import ConsolidationOptions, SearchFilter
from memstrata.client import MemoryClient
from memstrata.errors import BackendError, InvalidInput, NotFound, PermissionDenied
from memstrata.models import EventType, MemoryKind, MemoryRecord, Scope, SearchHit

from .conftest import Server


@pytest.fixture
def client(server: Server) -> Iterator[MemoryClient]:
    with MemoryClient(server.url, api_key=server.keys.admin) as client:
        yield client


def test_add_get_list_update_supersede_forget_history(client: MemoryClient) -> None:
    record = client.add("Quinn prefers window seats", scope="quinn", kind="preference", metadata={"src": "t"})
    assert isinstance(record, MemoryRecord)
    assert record.scope.user_id == "quinn" and record.kind is MemoryKind.PREFERENCE and record.metadata == {"src": "t"}
    assert client.get(record.id, scope="quinn").content == "Quinn prefers window seats"
    updated = client.update(record.id, scope="quinn", content="Quinn prefers aisle seats", importance=0.9)
    assert updated.content == "Quinn prefers aisle seats" and updated.importance == 0.9
    newer = client.supersede(record.id, "Quinn prefers exit rows", scope="quinn")
    assert [r.content for r in client.list(scope="quinn")] == ["Quinn prefers exit rows"]
    assert len(client.list(scope="quinn", filters=SearchFilter(include_superseded=True))) == 2
    events = client.history(record.id, scope="quinn")
    assert [e.event for e in events] == [EventType.ADD, EventType.UPDATE, EventType.SUPERSEDE]
    assert client.forget(newer.id, scope="quinn") is True
    assert client.forget(newer.id, scope="quinn") is False
    with pytest.raises(NotFound):
        client.get(newer.id, scope="quinn")


def test_list_follows_pages(client: MemoryClient) -> None:
    for i in range(12):
        client.add(f"Rae note {i}", scope="rae", kind="note")
    assert len(client.list(scope="rae", limit=5)) == 5
    assert len(client.list(scope="rae", limit=1000)) == 12


def test_search_with_scope_filters_and_scores(client: MemoryClient) -> None:
    client.add("Sam's laptop is a ThinkPad", scope=Scope("sam", agent_id="support"))
    client.add("Sam plays chess on Sundays", scope="sam", kind="event")
    hits = client.search("laptop", scope="sam", k=5)
    assert hits and isinstance(hits[0], SearchHit)
    assert hits[0].memory.content == "Sam's laptop is a ThinkPad" and hits[0].memory.scope.agent_id == "support"
    assert {"semantic", "keyword"} <= set(hits[0].scores)
    only_events = client.search("Sam", scope="sam", filters=SearchFilter(kinds=["event"]))
    assert {h.memory.kind for h in only_events} == {MemoryKind.EVENT}
    agent_only = client.search("Sam", scope=Scope("sam", agent_id="support"))
    assert [h.memory.content for h in agent_only] == ["Sam's laptop is a ThinkPad"]


def test_profile_entities_procedures(client: MemoryClient) -> None:
    fact = client.set_fact("home", "city", "Lyon", scope="tia", source="chat")
    assert fact.value == "Lyon" and [f.value for f in client.facts(scope="tia")] == ["Lyon"]
    assert client.delete_fact("home", "city", scope="tia") is True
    assert client.delete_fact("home", "city", scope="tia") is False
    entity = client.upsert_entity("Bruno", scope="tia", type="person", summary="Tia's brother")
    assert entity.key == "bruno" and client.entity("bruno", scope="tia").summary == "Tia's brother"
    assert [e.name for e in client.entities(scope="tia")] == ["Bruno"]
    client.add_procedure("reply to emails", scope="tia", instruction="Sign with 'Best, Tia'")
    [procedure] = client.procedures("reply to an email", scope="tia", k=1)
    assert procedure.task == "reply to emails"


def test_errors_are_memstrata_errors(server: Server) -> None:
    with MemoryClient(server.url, api_key=server.keys.alice) as alice:
        with pytest.raises(PermissionDenied):
            alice.list(scope="bob")
        with pytest.raises(InvalidInput):
            alice.add("   ", scope="alice")
        assert alice.whoami()["user"] == "alice"
    with MemoryClient(server.url, api_key="msk_nope") as stranger, pytest.raises(PermissionDenied):
        stranger.list(scope="alice")
    with MemoryClient("http://127.0.0.1:9", api_key="x") as nowhere, pytest.raises(BackendError):
        nowhere.health()


def test_learn_sessions_and_context(client: MemoryClient) -> None:
    learned = client.learn("I live in Vienna and I prefer tea over coffee.", scope="uli")
    assert learned.memories and any("Vienna" in m.content for m in learned.memories)
    assert client.learn_later(["I started learning the cello"], scope="uli")
    assert sum(client.queue_status().counts.values()) >= 1

    session = Scope("uli", session_id="chat-1")
    turn = client.add_message("user", "Can you recommend a Viennese cafe?", scope=session)
    assert turn.id and turn.role == "user"
    client.add_messages([{"role": "assistant", "content": "Try Cafe Central."}], scope=session)
    assert [t.content for t in client.recent_turns(scope=session)][-1] == "Try Cafe Central."
    assert client.session_summary(scope=session) == ""
    context = client.context("where does the user live", max_tokens=300, scope=session)
    assert "Vienna" in context.text and context.tokens <= 300 and context.part("recent") is not None
    updated = client.end_session(scope=session)
    assert updated is not None and updated["last_session"]
    assert client.user_context(scope="uli")["last_session"] == updated["last_session"]


def test_lifecycle_methods(client: MemoryClient) -> None:
    record = client.add("Vic collects vinyl records", scope="vic")
    document = client.export_user(scope="vic")
    assert [m.id for m in document.memories] == [record.id]
    report = client.import_user(document, scope="vic2")
    assert report.memories_written == 1 and client.get(record.id, scope="vic2").content == record.content
    assert client.consolidate(scope="vic", options=ConsolidationOptions(dry_run=True)).compressed == 0
    receipt = client.erase_user(scope="vic")
    assert receipt.counts["semantic"] == 1 and client.list(scope="vic") == []
