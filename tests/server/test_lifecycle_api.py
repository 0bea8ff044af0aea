"""Erasure with a receipt, export/import and consolidation over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from memstrata.storage.base import MemoryFilter

from .conftest import Server

EVERYTHING = MemoryFilter(include_superseded=True, include_expired=True)


@pytest.fixture
def admin(server: Server) -> Iterator[httpx.Client]:
    with server.client(server.keys.admin) as client:
        yield client


def fill(client: httpx.Client, user: str) -> str:
    memory_id = client.post(f"/v1/users/{user}/memories", json={"content": f"{user} owns a sailboat"}).json()["id"]
    client.patch(f"/v1/users/{user}/memories/{memory_id}", json={"content": f"{user} owns a red sailboat"})
    client.put(f"/v1/users/{user}/profile/facts/hobby/main", json={"value": "sailing"})
    client.put(f"/v1/users/{user}/entities/Marina Bay", json={"type": "place"})
    client.post(f"/v1/users/{user}/sessions/s1/messages", json={"messages": [{"content": "I sail on Sundays"}]})
    return memory_id


def test_erase_removes_every_layer_and_returns_a_receipt(server: Server, admin: httpx.Client) -> None:
    fill(admin, "vera")
    fill(admin, "will")
    response = admin.delete("/v1/users/vera")
    assert response.status_code == 200
    receipt = response.json()
    assert receipt["counts"]["semantic"] >= 1 and receipt["counts"]["profile"] >= 1
    assert "vera" not in str(receipt)  # content-free: the user id only as a salted hash

    store = server.memory.store
    assert store.list_memories("acme:vera", EVERYTHING, limit=100) == []
    assert store.all_history("acme:vera") == []
    assert admin.get("/v1/users/vera/profile/facts").json()["facts"] == []
    assert admin.get("/v1/users/vera/entities").json()["entities"] == []
    assert "vera" not in admin.get("/v1/users").json()["items"]
    assert admin.get("/v1/users/will/memories").json()["memories"]  # another user is untouched

    again = admin.get(f"/v1/users/vera/erasures/{receipt['request_id']}")
    assert again.status_code == 200 and again.json() == receipt
    assert admin.get(f"/v1/users/will/erasures/{receipt['request_id']}").status_code == 404
    with server.client(server.keys.other_tenant_admin) as other:
        assert other.get(f"/v1/users/vera/erasures/{receipt['request_id']}").status_code == 404


def test_a_user_key_may_erase_its_own_user_only(server: Server) -> None:
    with server.client(server.keys.admin) as admin:
        fill(admin, "bob")
    with server.client(server.keys.alice) as alice:
        assert alice.delete("/v1/users/bob").status_code == 403
    assert server.memory.store.list_memories("acme:bob", EVERYTHING, limit=10)
    with server.client(server.keys.bob) as bob:
        assert bob.delete("/v1/users/bob").status_code == 200
    assert server.memory.store.list_memories("acme:bob", EVERYTHING, limit=10) == []


def test_export_import_roundtrip_into_the_path_user(server: Server, admin: httpx.Client) -> None:
    memory_id = fill(admin, "xena")
    exported = admin.get("/v1/users/xena/export")
    assert exported.status_code == 200
    document = exported.json()
    assert document["format"] == "memstrata-export" and document["user_id"] == "acme:xena"
    assert any(m["id"] == memory_id for m in document["memories"])

    imported = admin.post("/v1/users/yuri/import", json=document)
    assert imported.status_code == 200 and imported.json()["memories_written"] == len(document["memories"])
    assert admin.post("/v1/users/yuri/import", json=document).json()["memories_written"] == 0  # idempotent
    copied = admin.get(f"/v1/users/yuri/memories/{memory_id}").json()
    assert copied["content"] == "xena owns a red sailboat" and copied["user_id"] == "yuri"
    history = admin.get(f"/v1/users/yuri/memories/{memory_id}/history").json()
    assert [e["event"] for e in history] == ["add", "update"]
    assert admin.get("/v1/users/yuri/profile/facts").json()["facts"][0]["value"] == "sailing"


def test_import_never_writes_outside_the_path_user(server: Server) -> None:
    with server.client(server.keys.admin) as admin:
        fill(admin, "zoe")
        document = admin.get("/v1/users/zoe/export").json()
    document["user_id"] = "acme:bob"
    before = server.memory.store.list_memories("acme:bob", EVERYTHING, limit=1000)
    with server.client(server.keys.alice) as alice:
        assert alice.post("/v1/users/bob/import", json=document).status_code == 403
        assert alice.post("/v1/users/alice/import", json=document).status_code == 200
    assert server.memory.store.list_memories("acme:bob", EVERYTHING, limit=1000) == before
    assert server.memory.store.get("acme:alice", [document["memories"][0]["id"]])


def test_import_rejects_a_malformed_document(admin: httpx.Client) -> None:
    response = admin.post("/v1/users/ann/import", json={"format": "something-else"})
    assert response.status_code == 422


def test_consolidate_dry_run(admin: httpx.Client) -> None:
    admin.post("/v1/users/cleo/memories", json={"content": "Cleo likes figs"})
    report = admin.post("/v1/users/cleo/consolidate", json={"dry_run": True, "min_count": 1, "older_than_days": 0})
    assert report.status_code == 200
    body = report.json()
    assert body["compressed"] == 0 and body["eligible"] >= 0
    assert [m["content"] for m in admin.get("/v1/users/cleo/memories").json()["memories"]] == ["Cleo likes figs"]
