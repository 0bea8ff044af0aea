"""Over real HTTP: a colliding import is a 422 naming the id and writes nothing; `recorded_as_of` filters."""

from __future__ import annotations

from memstrata.storage.base import MemoryFilter

from .conftest import Server

EVERYTHING = MemoryFilter(include_superseded=True, include_expired=True)


def test_an_import_with_colliding_history_ids_is_422_and_writes_nothing(server: Server) -> None:
    with server.client(server.keys.admin) as admin:
        first = admin.post("/v1/users/ida/memories", json={"content": "Ida owns a kayak"}).json()["id"]
        admin.patch(f"/v1/users/ida/memories/{first}", json={"content": "Ida owns a red kayak"})
        document = admin.get("/v1/users/ida/export").json()
        document["history"][1]["id"] = document["history"][0]["id"]

        response = admin.post("/v1/users/jon/import", json=document)

    assert response.status_code == 422
    assert document["history"][0]["id"] in response.text
    assert server.memory.store.list_memories("acme:jon", EVERYTHING, limit=10) == []
    assert server.memory.store.all_history("acme:jon") == []


def test_listing_takes_recorded_as_of(server: Server) -> None:
    with server.client(server.keys.admin) as admin:
        admin.post("/v1/users/kim/memories", json={"content": "Kim plays the cello"})
        before = admin.get("/v1/users/kim/memories", params={"recorded_as_of": "2000-01-01T00:00:00Z"})
        after = admin.get("/v1/users/kim/memories", params={"recorded_as_of": "2999-01-01T00:00:00Z"})
        search = admin.post(
            "/v1/users/kim/search", json={"query": "cello", "filters": {"recorded_as_of": "2000-01-01T00:00:00Z"}}
        )
    assert before.status_code == 200 and before.json()["memories"] == []
    assert [m["content"] for m in after.json()["memories"]] == ["Kim plays the cello"]
    assert search.status_code == 200 and search.json()["hits"] == []
