"""The REST API over real HTTP (uvicorn on 127.0.0.1): memories, search, history, limits, health, metrics."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from memstrata.server.app import INSECURE_HEADER

from .conftest import Server


@pytest.fixture
def admin(server: Server) -> httpx.Client:
    with server.client(server.keys.admin) as client:
        yield client


def add(client: httpx.Client, user: str, content: str, **fields: object) -> dict:
    response = client.post(f"/v1/users/{user}/memories", json={"content": content, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def test_add_get_update_forget_roundtrip(admin: httpx.Client) -> None:
    created = add(admin, "carol", "Carol lives in Lisbon", kind="fact", metadata={"topic": "home"}, importance=0.8)
    assert created["user_id"] == "carol"
    assert created["kind"] == "fact" and created["metadata"] == {"topic": "home"} and created["importance"] == 0.8
    got = admin.get(f"/v1/users/carol/memories/{created['id']}").json()
    assert got["content"] == "Carol lives in Lisbon"

    updated = admin.patch(f"/v1/users/carol/memories/{created['id']}", json={"content": "Carol lives in Porto"})
    assert updated.status_code == 200 and updated.json()["content"] == "Carol lives in Porto"

    history = admin.get(f"/v1/users/carol/memories/{created['id']}/history").json()
    assert [e["event"] for e in history] == ["add", "update"]
    assert history[1]["before"] == "Carol lives in Lisbon" and history[1]["after"] == "Carol lives in Porto"

    forgotten = admin.delete(f"/v1/users/carol/memories/{created['id']}")
    assert forgotten.json() == {"id": created["id"], "forgotten": True}
    missing = admin.get(f"/v1/users/carol/memories/{created['id']}")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["status"] == 404 and "not found" in missing.json()["detail"]
    assert admin.delete(f"/v1/users/carol/memories/{created['id']}").status_code == 404
    scrubbed = admin.get(f"/v1/users/carol/memories/{created['id']}/history").json()
    assert "Lisbon" not in json.dumps(scrubbed) and "Porto" not in json.dumps(scrubbed)


def test_supersede_keeps_the_old_fact_out_of_current_results(admin: httpx.Client) -> None:
    old = add(admin, "dave", "Dave works at Initech")
    new = admin.post(f"/v1/users/dave/memories/{old['id']}/supersede", json={"content": "Dave works at Globex"})
    assert new.status_code == 201
    current = admin.get("/v1/users/dave/memories").json()["memories"]
    assert [m["content"] for m in current] == ["Dave works at Globex"]
    everything = admin.get("/v1/users/dave/memories", params={"include_superseded": "true"}).json()["memories"]
    retired = next(m for m in everything if m["id"] == old["id"])
    assert retired["valid_to"] is not None and retired["superseded_by"] == new.json()["id"]


def test_list_paginates_with_next_offset(admin: httpx.Client) -> None:
    for i in range(7):
        add(admin, "erin", f"note number {i}", kind="note")
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = admin.get("/v1/users/erin/memories", params={"limit": 3, "offset": offset}).json()
        assert len(page["memories"]) <= 3
        seen += [m["content"] for m in page["memories"]]
        offset = page["next_offset"]
    assert sorted(seen) == sorted(f"note number {i}" for i in range(7))
    assert admin.get("/v1/users/erin/memories", params={"limit": 0}).status_code == 422
    assert admin.get("/v1/users/erin/memories", params={"limit": 501}).status_code == 422


def test_list_filters_by_kind(admin: httpx.Client) -> None:
    add(admin, "fay", "Fay prefers tea", kind="preference")
    add(admin, "fay", "Fay has a dentist appointment", kind="event")
    kinds = admin.get("/v1/users/fay/memories", params={"kinds": "preference"}).json()["memories"]
    assert [m["kind"] for m in kinds] == ["preference"]


def test_search_returns_component_scores(admin: httpx.Client) -> None:
    add(admin, "gus", "Gus loves climbing in the mountains", kind="preference")
    add(admin, "gus", "Gus owns a red bicycle")
    response = admin.post("/v1/users/gus/search", json={"query": "climbing mountains", "k": 5})
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert hits[0]["memory"]["content"] == "Gus loves climbing in the mountains"
    assert {"semantic", "keyword", "hybrid"} <= set(hits[0]["scores"])
    keyword = admin.post("/v1/users/gus/search", json={"query": "bicycle", "strategy": "keyword"}).json()["hits"]
    assert [h["memory"]["content"] for h in keyword] == ["Gus owns a red bicycle"]
    filtered = admin.post("/v1/users/gus/search", json={"query": "Gus", "filters": {"kinds": ["preference"]}}).json()[
        "hits"
    ]
    assert {h["memory"]["kind"] for h in filtered} == {"preference"}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param({"content": ""}, "content", id="empty-content"),
        pytest.param({"content": "x", "kind": "gossip"}, "kind", id="unknown-kind"),
        pytest.param({"content": "x", "importance": 2}, "importance", id="importance-range"),
        pytest.param({"content": "x", "surprise": 1}, "surprise", id="unknown-field"),
        pytest.param({"content": "x", "metadata": {"a": "b\u0000"}}, "NUL", id="nul-in-metadata"),
        pytest.param({"content": "x", "agent_id": "has space"}, "agent_id", id="bad-agent-id"),
    ],
)
def test_invalid_input_is_a_422_problem(admin: httpx.Client, body: dict, fragment: str) -> None:
    response = admin.post("/v1/users/hal/memories", json=body)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert fragment in response.json()["detail"]


def test_invalid_user_id_in_path_is_422(admin: httpx.Client) -> None:
    response = admin.get("/v1/users/_system/memories")
    assert response.status_code == 422
    assert "user_id" in response.json()["detail"]


def test_body_size_limit_is_413_and_nothing_is_stored(admin: httpx.Client) -> None:
    huge = json.dumps({"content": "y" * 2_000_000}).encode()
    response = admin.post("/v1/users/ivy/memories", content=huge, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["status"] == 413

    def chunks():
        for _ in range(40):
            yield b"z" * 65536

    chunked = admin.post("/v1/users/ivy/memories", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    assert admin.get("/v1/users/ivy/memories").json()["memories"] == []


def test_profile_facts_entities_and_procedures(admin: httpx.Client) -> None:
    fact = admin.put("/v1/users/jo/profile/facts/work/employer", json={"value": "Initech", "source": "chat"})
    assert fact.status_code == 200 and fact.json()["value"] == "Initech"
    admin.put("/v1/users/jo/profile/facts/work/employer", json={"value": "Globex"})
    facts = admin.get("/v1/users/jo/profile/facts").json()["facts"]
    assert [(f["key"], f["value"]) for f in facts] == [("employer", "Globex")]
    assert facts[0]["previous"][0]["value"] == "Initech"
    assert admin.delete("/v1/users/jo/profile/facts/work/employer").status_code == 204
    assert admin.delete("/v1/users/jo/profile/facts/work/employer").status_code == 404

    entity = admin.put("/v1/users/jo/entities/Sarah", json={"type": "person", "summary": "Jo's manager"})
    assert entity.status_code == 200 and entity.json()["key"] == "sarah"
    assert admin.get("/v1/users/jo/entities/sarah").json()["summary"] == "Jo's manager"
    assert [e["name"] for e in admin.get("/v1/users/jo/entities").json()["entities"]] == ["Sarah"]
    assert admin.get("/v1/users/jo/entities/nobody").status_code == 404

    added = admin.post("/v1/users/jo/procedures", json={"task": "write emails", "instruction": "Keep them short"})
    assert added.status_code == 201
    found = admin.get("/v1/users/jo/procedures", params={"task": "write an email"}).json()["procedures"]
    assert found[0]["text"] == "- write emails: Keep them short"


def test_agent_ids_are_tenant_qualified_in_the_store(server: Server, admin: httpx.Client) -> None:
    created = add(admin, "kim", "Kim uses vim", agent_id="coder")
    assert created["agent_id"] == "coder"
    [record] = server.memory.store.get("acme:kim", [created["id"]])
    assert record.scope.agent_id == "acme:coder"


def test_users_lists_only_the_tenant(server: Server, admin: httpx.Client) -> None:
    add(admin, "lee", "Lee likes jazz")
    with server.client(server.keys.other_tenant_admin) as other:
        other.post("/v1/users/lee/memories", json={"content": "Globex Lee likes rock"})
        assert other.get("/v1/users").json()["items"] == ["lee"]
        assert [m["content"] for m in other.get("/v1/users/lee/memories").json()["memories"]] == [
            "Globex Lee likes rock"
        ]
    users = admin.get("/v1/users").json()["items"]
    assert "lee" in users and all(":" not in u for u in users)
    assert [m["content"] for m in admin.get("/v1/users/lee/memories").json()["memories"]] == ["Lee likes jazz"]


def test_healthz_metrics_docs_and_openapi(server: Server) -> None:
    with httpx.Client(base_url=server.url) as anonymous:
        assert anonymous.get("/healthz").json()["status"] == "ok"
        anonymous.get("/v1/whoami")
        metrics = anonymous.get("/metrics")
        assert metrics.status_code == 200
        assert 'memstrata_http_requests_total{method="GET",route="/healthz",status="200"}' in metrics.text
        assert 'route="/v1/whoami",status="401"' in metrics.text
        assert "/v1/users/{user_id}/memories" in anonymous.get("/openapi.json").json()["paths"]
        assert "swagger" in anonymous.get("/docs").text.lower()
        assert anonymous.get("/ui/").status_code == 200
        assert INSECURE_HEADER not in anonymous.get("/healthz").headers


def test_whoami(server: Server) -> None:
    with server.client(server.keys.alice) as alice:
        me = alice.get("/v1/whoami").json()
    assert me == {
        "tenant": "acme",
        "user": "alice",
        "admin": False,
        "auth": True,
        "key_id": me["key_id"],
        "role": "user",
        "permissions": ["erase", "export", "read", "write"],
    }
    assert me["key_id"]


def test_insecure_mode_is_explicit_and_loud(insecure_server: Server) -> None:
    with insecure_server.client(None) as anonymous:
        me = anonymous.get("/v1/whoami")
        assert me.json()["auth"] is False and me.json()["tenant"] == "default" and me.json()["admin"] is True
        assert "development" in me.headers[INSECURE_HEADER]
        created = anonymous.post("/v1/users/zed/memories", json={"content": "dev mode works"})
        assert created.status_code == 201 and INSECURE_HEADER in created.headers
    assert insecure_server.memory.store.get("default:zed", [created.json()["id"]])


def test_learn_now_and_in_the_background(server: Server, admin: httpx.Client) -> None:
    messages = [{"role": "user", "content": "I live in Berlin and I prefer short answers."}]
    learned = admin.post("/v1/users/nia/learn", json={"messages": messages})
    assert learned.status_code == 200, learned.text
    operations = learned.json()["operations"]
    assert operations and {op["event"] for op in operations} <= {"add", "noop", "supersede", "update"}
    assert any("Berlin" in op["memory"]["content"] for op in operations)

    # said after the first message (valid time): an older statement would not supersede Berlin
    said = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    later = [{"role": "user", "content": "I moved to Munich last month.", "at": said}]
    queued = admin.post("/v1/users/nia/learn", json={"messages": later, "background": True})
    assert queued.status_code == 202 and queued.json()["job_id"]
    deadline = time.monotonic() + 20
    busy = ("pending", "running")
    while any(admin.get("/v1/queue").json()["counts"].get(s, 0) for s in busy) and time.monotonic() < deadline:
        time.sleep(0.2)
    status = admin.get("/v1/queue").json()
    assert status["counts"]["pending"] == 0 and status["counts"]["done"] >= 1 and status["failures"] == []
    contents = [m["content"] for m in admin.get("/v1/users/nia/memories").json()["memories"]]
    assert any("Munich" in c for c in contents), (contents, status)


def test_queue_status_of_a_user_key_covers_only_its_user(server: Server) -> None:
    with server.client(server.keys.bob) as bob:
        assert (
            bob.post("/v1/users/bob/learn", json={"messages": [{"content": "hi"}], "background": True}).status_code
            == 202
        )
        counts = bob.get("/v1/queue").json()["counts"]
    assert sum(counts.values()) >= 1
    with server.client(server.keys.other_tenant_admin) as other:
        assert sum(other.get("/v1/queue").json()["counts"].values()) == 0


def test_add_stores_verbatim_and_learn_reconciles_a_new_value_with_the_current_one(admin: httpx.Client) -> None:
    old = add(admin, "ezra", "Ezra lives in Lisbon")
    add(admin, "ezra", "Ezra plays the cello")
    also = add(admin, "ezra", "Ezra lives in Faro")  # a verbatim add retires nothing
    current = admin.get("/v1/users/ezra/memories").json()["memories"]
    expected = ["Ezra lives in Faro", "Ezra lives in Lisbon", "Ezra plays the cello"]
    assert sorted(m["content"] for m in current) == expected
    learned = admin.post("/v1/users/ezra/learn", json={"messages": [{"content": "I live in Porto now"}]}).json()
    [operation] = learned["operations"]
    assert operation["event"] == "supersede" and set(operation["replaced_ids"]) == {old["id"], also["id"]}
    current = admin.get("/v1/users/ezra/memories").json()["memories"]
    assert sorted(m["content"] for m in current) == ["Ezra plays the cello", "The user lives in Porto."]
    history = admin.get(f"/v1/users/ezra/memories/{old['id']}/history").json()
    assert [e["event"] for e in history] == ["add", "supersede"]
    assert history[1]["after"] == operation["memory"]["content"]
