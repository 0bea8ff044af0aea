"""Over real HTTP: a colliding import is a 422 naming the id and writes nothing; `recorded_as_of` filters;
a queued job's status."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstrata import MemoryClient, NotFound
from memstrata.layers.work_queue import new_job_id
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


def test_a_jobs_status_crosses_the_wire_and_says_expired_after_the_retention(server: Server) -> None:
    """A queued job's status over REST and `MemoryClient.job_status`: pending while it waits, done once run,
    `expired` for an id queued before the retention whose record is gone, `NotFound` for a recent unknown id."""
    now = server.memory.clock()
    with MemoryClient(server.url, api_key=server.keys.admin) as client:
        job = client.learn_later([{"role": "user", "content": "I moved to Lisbon."}], scope="lena")
        assert client.job_status(job, scope="lena").status == "pending"
        server.memory.process_queue()
        done = client.job_status(job, scope="lena")
        assert (done.id, done.status) == (job, "done") and done.finished_at is not None
        purged = new_job_id(now - timedelta(days=30))  # queued before the 7-day retention, record gone
        assert client.job_status(purged, scope="lena").status == "expired"
        with pytest.raises(NotFound):
            client.job_status(new_job_id(now), scope="lena")
