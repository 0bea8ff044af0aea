"""Sessions, the user context object and the assembled context over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from .conftest import Server


@pytest.fixture
def admin(server: Server) -> Iterator[httpx.Client]:
    with server.client(server.keys.admin) as client:
        yield client


def post_messages(client: httpx.Client, user: str, session: str, *contents: str) -> list[dict]:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(contents)]
    response = client.post(f"/v1/users/{user}/sessions/{session}/messages", json={"messages": messages})
    assert response.status_code == 201, response.text
    return response.json()


def test_messages_turns_end_session_and_profile(admin: httpx.Client) -> None:
    turns = post_messages(admin, "olga", "s1", "I love hiking in the Alps", "Sounds great!")
    assert [t["role"] for t in turns] == ["user", "assistant"] and all(t["id"] for t in turns)
    session = admin.get("/v1/users/olga/sessions/s1").json()
    assert [t["content"] for t in session["turns"]] == ["I love hiking in the Alps", "Sounds great!"]
    assert admin.get("/v1/users/olga/sessions/s1", params={"n": 1}).json()["turns"][0]["content"] == "Sounds great!"

    ended = admin.post("/v1/users/olga/sessions/s1/end", json={})
    assert ended.status_code == 200 and ended.json()["status"] == "ended"
    context = ended.json()["user_context"]
    assert context["user_id"] == "olga" and context["last_session"]
    assert "Alps" in " ".join(context["last_topics"]) or context["preferences"]
    assert admin.get("/v1/users/olga/profile").json() == context


def test_end_session_in_the_background(admin: httpx.Client) -> None:
    post_messages(admin, "pete", "s1", "Remind me to call the dentist tomorrow")
    queued = admin.post("/v1/users/pete/sessions/s1/end", json={"background": True})
    assert queued.status_code == 202 and queued.json() == {"status": "queued", "user_context": None}
    deadline = time.monotonic() + 20
    while not admin.get("/v1/users/pete/profile").json().get("last_session") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert admin.get("/v1/users/pete/profile").json()["last_session"]


def test_context_assembles_every_layer_within_the_budget(admin: httpx.Client) -> None:
    admin.post("/v1/users/quin/memories", json={"content": "Quin prefers answers in French", "kind": "preference"})
    admin.put("/v1/users/quin/profile/facts/identity/name", json={"value": "Quin"})
    post_messages(admin, "quin", "s9", "What should I cook tonight?", "How about ratatouille?")
    response = admin.post(
        "/v1/users/quin/context", json={"query": "answer language", "max_tokens": 400, "session_id": "s9"}
    )
    assert response.status_code == 200
    context = response.json()
    assert context["tokens"] <= 400 and context["max_tokens"] == 400
    names = [p["name"] for p in context["parts"]]
    assert "memories" in names and "recent" in names
    assert "Quin prefers answers in French" in context["text"] and "ratatouille" in context["text"]
    assert sum(p["tokens"] for p in context["parts"]) <= context["tokens"] + len(context["parts"]) * 2

    tiny = admin.post("/v1/users/quin/context", json={"query": "answer language", "max_tokens": 5}).json()
    assert tiny["tokens"] <= 5 and tiny["dropped"]
    only = admin.post("/v1/users/quin/context", json={"include": ["memories"], "query": "French"}).json()
    assert [p["name"] for p in only["parts"]] == ["memories"]
    assert admin.post("/v1/users/quin/context", json={"include": ["gossip"]}).status_code == 422


def test_clear_session_keeps_the_episodes(admin: httpx.Client) -> None:
    post_messages(admin, "ria", "s1", "temporary chatter")
    assert admin.delete("/v1/users/ria/sessions/s1").status_code == 204
    assert admin.get("/v1/users/ria/sessions/s1").json()["summary"] == ""
    episodes = admin.get("/v1/users/ria/memories", params={"kinds": "episode"}).json()["memories"]
    assert [m["content"] for m in episodes] == ["temporary chatter"]


def test_user_key_cannot_use_another_users_session(server: Server) -> None:
    with server.client(server.keys.alice) as alice:
        body = {"messages": [{"content": "hello"}]}
        assert alice.post("/v1/users/bob/sessions/s1/messages", json=body).status_code == 403
        assert alice.get("/v1/users/bob/sessions/s1").status_code == 403
        assert alice.post("/v1/users/bob/sessions/s1/end", json={}).status_code == 403
        assert alice.post("/v1/users/bob/context", json={}).status_code == 403
        assert alice.get("/v1/users/bob/profile").status_code == 403
