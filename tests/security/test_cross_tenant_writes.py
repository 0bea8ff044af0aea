"""A write is authorized when it is applied: nothing queued or imported can write as another user.

The attack: a key bound to one user imports a document holding a pending queue job that names a user
of another tenant; the worker must never run it as that user (RLS cannot stop it, because the worker
sets the user itself). Checked over a real server on SQLite and on Postgres as the application role.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import InvalidInput, PermissionDenied
from memstrata.layers.lifecycle.portability import rebase_agent
from memstrata.layers.work_queue import job_scope
from memstrata.memory import Memory
from memstrata.server.app import create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig
from tests.server.conftest import Server, make_keys, serve

VICTIM = "globex:victim"


def forged_document(attacker: str, *, job_user: str, job_agent: str | None = None) -> dict[str, Any]:
    now = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    job = {
        "id": "job-evil",
        "status": "pending",
        "attempts": 0,
        "error": None,
        "scope": {"user_id": job_user, "agent_id": job_agent, "session_id": None},
        "messages": [{"role": "user", "content": "I live in Evilcity.", "at": now, "speaker": None}],
        "created_at": now,
        "finished_at": None,
    }
    return {
        "format": "memstrata-export",
        "version": 1,
        "user_id": attacker,
        "exported_at": now,
        "source": {"store": "sqlite", "embedder": "hashing-64", "dimensions": 64, "memstrata_version": "x"},
        "memories": [],
        "history": [],
        "items": [{"namespace": "queue", "key": "job-evil", "value": job, "updated_at": now}],
    }


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Server]:
    if request.param == "sqlite":
        memory = Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64))
        with memory, serve(create_app(memory=memory, config=ServerConfig(worker=False))) as url:
            yield Server(url, memory, make_keys(memory))
        return
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import postgres_urls

    with postgres_urls() as (app_url, owner_url):
        memory = Memory(store=PostgresStore.open(app_url, owner_url=owner_url), embedder=HashingEmbedder(64))
        with memory, serve(create_app(memory=memory, config=ServerConfig(worker=False))) as url:
            yield Server(url, memory, make_keys(memory))


def test_imported_queue_job_naming_another_tenant_never_runs(server: Server) -> None:
    _, victim_key = KeyRing(server.memory.store).create("globex", user="victim")
    with server.client(victim_key) as victim:
        assert victim.post("/v1/users/victim/memories", json={"content": "The user lives in Oslo."}).status_code == 201
    document = forged_document("acme:alice", job_user=VICTIM)
    with server.client(server.keys.alice) as alice:
        response = alice.post("/v1/users/alice/import", json=document)
        assert response.status_code == 200, response.text
        assert response.json()["items_skipped"] == 1  # the job is work, not data: never imported

    server.memory.process_queue()
    contents = [r.content for r in server.memory.list(scope=VICTIM)]
    assert contents == ["The user lives in Oslo."]
    assert not any("Evilcity" in r.content for r in server.memory.list(scope="acme:alice"))


def test_forged_job_in_a_users_queue_is_refused_and_reported(server: Server) -> None:
    """Even a job that reached a user's queue some other way runs only as its owner, or not at all."""
    job = forged_document("acme:alice", job_user=VICTIM)["items"][0]["value"]
    server.memory.store.put_item("acme:alice", "queue", "job-evil", job)
    other_agent = forged_document("acme:alice", job_user="acme:alice", job_agent="globex:bot")["items"][0]["value"]
    server.memory.store.put_item("acme:alice", "queue", "job-agent", other_agent | {"id": "job-agent"})

    assert server.memory.process_queue() == 2
    assert server.memory.list(scope=VICTIM) == []
    assert server.memory.list(scope="acme:alice") == []
    status = server.memory.queue_status()
    assert status.counts["failed"] == 2 and status.counts["pending"] == 0
    assert all(f["error"].startswith("refused:") for f in status.failures)


def test_job_scope_is_the_owner() -> None:
    scope = job_scope("acme:alice", {"user_id": "acme:alice", "agent_id": "acme:bot", "session_id": "s1"})
    assert (scope.user_id, scope.agent_id, scope.session_id) == ("acme:alice", "acme:bot", "s1")
    assert job_scope("alice", {"user_id": "alice", "agent_id": "bot"}).agent_id == "bot"
    for recorded in [
        {"user_id": VICTIM},
        {"user_id": "acme:alice", "agent_id": "globex:bot"},
        {"user_id": "acme:alice", "session_id": ""},
        None,
        "acme:alice",
    ]:
        with pytest.raises(PermissionDenied):
            job_scope("acme:alice", recorded)


def test_imported_agent_ids_stay_in_the_target_tenant() -> None:
    assert rebase_agent(None, source_user="acme:a", target_user="acme:b") is None
    assert rebase_agent("acme:bot", source_user="acme:a", target_user="acme:b") == "acme:bot"
    assert rebase_agent("acme:bot", source_user="acme:a", target_user="initech:b") == "initech:bot"
    assert rebase_agent("bot", source_user="a", target_user="b") == "bot"
    with pytest.raises(InvalidInput, match="globex:bot"):
        rebase_agent("globex:bot", source_user="acme:a", target_user="acme:b")
