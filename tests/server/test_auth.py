"""The auth matrix over real HTTP → 401/403 and no data change.

No key, wrong key, revoked key, another tenant's key, and a user-bound key reaching for another user
through the path, the body, search filters and metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memstrata import namespaces
from memstrata.server.auth import KeyRing, hash_token
from memstrata.storage.base import MemoryFilter

from .conftest import Server

EVERYTHING = MemoryFilter(include_superseded=True, include_expired=True)
EXPORT = {
    "format": "memstrata-export",
    "version": 1,
    "user_id": "acme:mallory",
    "exported_at": "2026-01-01T00:00:00Z",
    "source": {"store": "sqlite", "embedder": "hashing-64", "dimensions": 64, "memstrata_version": "0.1.0"},
    "memories": [
        {
            "id": "m-injected",
            "kind": "fact",
            "content": "injected by import",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }
    ],
}


def snapshot(server: Server, *users: str) -> Any:
    """Every row of these store users: memories (all versions), history, items of every namespace."""
    store = server.memory.store
    state = {}
    for user in users:
        state[user] = (
            store.list_memories(user, EVERYTHING, limit=100_000),
            store.all_history(user),
            {ns: store.list_items(user, ns) for ns in namespaces.ALL_USER_NAMESPACES},
        )
    return state


@pytest.fixture(scope="module")
def seeded(server: Server) -> dict[str, str]:
    """One memory of alice and one of bob (tenant acme), plus bob's profile and entity."""
    with server.client(server.keys.admin) as admin:
        alice = admin.post("/v1/users/alice/memories", json={"content": "Alice likes green tea"}).json()["id"]
        bob = admin.post("/v1/users/bob/memories", json={"content": "Bob's PIN is 4242"}).json()["id"]
        admin.put("/v1/users/bob/profile/facts/personal/city", json={"value": "Oslo"})
        admin.put("/v1/users/bob/entities/Eve", json={"type": "person"})
    return {"alice": alice, "bob": bob}


def requests_on(user: str, memory_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """One request per route that touches `user`."""
    base = f"/v1/users/{user}"
    return [
        ("GET", f"{base}/memories", None),
        ("POST", f"{base}/memories", {"content": "injected"}),
        ("GET", f"{base}/memories/{memory_id}", None),
        ("PATCH", f"{base}/memories/{memory_id}", {"content": "overwritten"}),
        ("POST", f"{base}/memories/{memory_id}/supersede", {"content": "replaced"}),
        ("DELETE", f"{base}/memories/{memory_id}", None),
        ("GET", f"{base}/memories/{memory_id}/history", None),
        ("POST", f"{base}/search", {"query": "PIN"}),
        ("GET", f"{base}/profile/facts", None),
        ("PUT", f"{base}/profile/facts/personal/city", {"value": "Paris"}),
        ("DELETE", f"{base}/profile/facts/personal/city", None),
        ("GET", f"{base}/entities", None),
        ("GET", f"{base}/entities/eve", None),
        ("PUT", f"{base}/entities/Eve", {"summary": "hijacked"}),
        ("POST", f"{base}/procedures", {"task": "t", "instruction": "do evil"}),
        ("GET", f"{base}/procedures?task=t", None),
        ("POST", f"{base}/learn", {"messages": [{"content": "I live in Rome"}]}),
        ("POST", f"{base}/sessions/s1/messages", {"messages": [{"content": "hello"}]}),
        ("GET", f"{base}/sessions/s1", None),
        ("POST", f"{base}/sessions/s1/end", {}),
        ("DELETE", f"{base}/sessions/s1", None),
        ("POST", f"{base}/context", {"query": "PIN"}),
        ("GET", f"{base}/profile", None),
        ("GET", f"{base}/export", None),
        ("POST", f"{base}/consolidate", {"dry_run": True}),
        ("POST", f"{base}/import", EXPORT),
        ("DELETE", base, None),
    ]


def call(client: httpx.Client, method: str, path: str, body: dict[str, Any] | None) -> httpx.Response:
    return client.request(method, path, json=body)


@pytest.fixture
def unchanged(server: Server, seeded: dict[str, str]) -> Iterator[None]:
    before = snapshot(server, "acme:alice", "acme:bob")
    yield
    assert snapshot(server, "acme:alice", "acme:bob") == before


@pytest.mark.parametrize(
    "credentials",
    [
        pytest.param(None, id="no-key"),
        pytest.param("msk_" + "x" * 43, id="wrong-key"),
        pytest.param("not-even-a-key", id="malformed-key"),
        pytest.param("revoked", id="revoked-key"),
    ],
)
def test_missing_wrong_or_revoked_key_is_401_everywhere(
    server: Server, seeded: dict[str, str], unchanged: None, credentials: str | None
) -> None:
    token = server.keys.revoked if credentials == "revoked" else credentials
    with server.client(token) as client:
        for method, path, body in [*requests_on("bob", seeded["bob"]), ("GET", "/v1/users", None)]:
            response = call(client, method, path, body)
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.json()["status"] == 401


def test_basic_auth_scheme_is_not_accepted(server: Server, seeded: dict[str, str]) -> None:
    response = httpx.get(f"{server.url}/v1/users/bob/memories", headers={"Authorization": f"Basic {server.keys.bob}"})
    assert response.status_code == 401


def test_user_key_cannot_touch_another_user_via_the_path(
    server: Server, seeded: dict[str, str], unchanged: None
) -> None:
    with server.client(server.keys.alice) as alice:
        for method, path, body in requests_on("bob", seeded["bob"]):
            response = call(alice, method, path, body)
            assert response.status_code == 403, (method, path, response.text)
            assert response.json()["error"] == "PermissionDenied"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/v1/users/alice/memories", {"content": "x", "user_id": "bob"}, id="body-user_id"),
        pytest.param(
            "POST",
            "/v1/users/alice/memories",
            {"content": "x", "metadata": {"user_id": "bob"}},
            id="metadata",
        ),
        pytest.param("PATCH", "/v1/users/alice/memories/{alice}", {"content": "x", "user_id": "bob"}, id="update-body"),
        pytest.param("PATCH", "/v1/users/alice/memories/{alice}", {"metadata": {"user_id": "bob"}}, id="update-meta"),
        pytest.param("POST", "/v1/users/alice/search", {"query": "PIN", "user_id": "bob"}, id="search-body"),
        pytest.param("POST", "/v1/users/alice/search", {"query": "PIN", "filters": {"user_id": "bob"}}, id="filters"),
        pytest.param(
            "POST",
            "/v1/users/alice/search",
            {"query": "PIN", "filters": {"metadata": {"user_id": "bob"}}},
            id="filter-metadata",
        ),
    ],
)
def test_user_key_cannot_reach_another_user_via_body_filters_or_metadata(
    server: Server, seeded: dict[str, str], unchanged: None, method: str, path: str, body: dict[str, Any]
) -> None:
    with server.client(server.keys.alice) as alice:
        response = call(alice, method, path.format(alice=seeded["alice"]), body)
    assert response.status_code == 403, response.text
    assert "bob" in response.json()["detail"]


def test_user_key_cannot_read_or_delete_another_users_memory_by_id(
    server: Server, seeded: dict[str, str], unchanged: None
) -> None:
    with server.client(server.keys.alice) as alice:
        assert alice.get(f"/v1/users/alice/memories/{seeded['bob']}").status_code == 404
        assert alice.delete(f"/v1/users/alice/memories/{seeded['bob']}").status_code == 404
        assert alice.get(f"/v1/users/alice/memories/{seeded['bob']}/history").json() == []


def test_search_never_returns_another_users_memory(server: Server, seeded: dict[str, str]) -> None:
    with server.client(server.keys.alice) as alice:
        hits = alice.post("/v1/users/alice/search", json={"query": "Bob PIN 4242", "k": 50}).json()["hits"]
    assert hits and all("4242" not in h["memory"]["content"] for h in hits)


def test_user_key_sees_only_itself_and_cannot_share_agent_wide(
    server: Server, seeded: dict[str, str], unchanged: None
) -> None:
    with server.client(server.keys.alice) as alice:
        assert alice.get("/v1/users").json() == {"items": ["alice"], "next_offset": None}
        shared = {"task": "t", "instruction": "i", "agent_id": "bot", "agent_wide": True}
        assert alice.post("/v1/users/alice/procedures", json=shared).status_code == 403


def test_another_tenant_cannot_see_or_change_this_tenants_users(
    server: Server, seeded: dict[str, str], unchanged: None
) -> None:
    with server.client(server.keys.other_tenant_admin) as other:
        assert other.get("/v1/users/bob/memories").json()["memories"] == []
        assert other.get(f"/v1/users/bob/memories/{seeded['bob']}").status_code == 404
        assert other.delete(f"/v1/users/bob/memories/{seeded['bob']}").status_code == 404
        assert other.post("/v1/users/bob/search", json={"query": "PIN"}).json()["hits"] == []
        assert other.get("/v1/users/bob/profile/facts").json()["facts"] == []


def test_admin_key_with_conflicting_ids_is_refused(server: Server, seeded: dict[str, str], unchanged: None) -> None:
    with server.client(server.keys.admin) as admin:
        response = admin.post("/v1/users/alice/memories", json={"content": "x", "user_id": "bob"})
    assert response.status_code == 422


def test_user_key_works_on_its_own_user(server: Server, seeded: dict[str, str]) -> None:
    with server.client(server.keys.alice) as alice:
        created = alice.post("/v1/users/alice/memories", json={"content": "Alice owns a cat", "user_id": "alice"})
        assert created.status_code == 201
        assert alice.delete(f"/v1/users/alice/memories/{created.json()['id']}").status_code == 200


def test_revocation_takes_effect_on_the_next_request(server: Server) -> None:
    ring = KeyRing(server.memory.store)
    key, token = ring.create("acme", user="alice", name="short-lived")
    with server.client(token) as client:
        assert client.get("/v1/users/alice/memories").status_code == 200
        ring.revoke(key.id)
        assert client.get("/v1/users/alice/memories").status_code == 401


def test_only_hashes_are_stored(server: Server) -> None:
    items = server.memory.store.list_items(namespaces.SYSTEM_USER, "apikey")
    stored = repr(items)
    for token in (server.keys.admin, server.keys.alice, server.keys.bob):
        assert token not in stored
        assert hash_token(token) in {item.key for item in items}
