"""The server on PostgreSQL (app role without BYPASSRLS): keys, isolation, and row-level security.

The request's store user id (`tenant:user`) is what the store puts into `app.user_id` for each
transaction, so the database itself refuses rows of another user.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.server.app import create_app
from memstrata.server.config import ServerConfig

from .conftest import Server, make_keys, serve

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg() -> Iterator[tuple[Server, str]]:
    from memstrata.storage.postgres import PostgresStore
    from tests.support.pg import postgres_urls

    with postgres_urls() as (app_url, owner_url):
        memory = Memory(store=PostgresStore.open(app_url, owner_url=owner_url), embedder=HashingEmbedder(64))
        try:
            keys = make_keys(memory)
            with serve(create_app(memory=memory, config=ServerConfig(worker=False))) as url:
                yield Server(url, memory, keys), app_url
        finally:
            memory.close()


def test_api_roundtrip_and_isolation_on_postgres(pg: tuple[Server, str]) -> None:
    server, _ = pg
    with server.client(server.keys.admin) as admin:
        created = admin.post("/v1/users/alice/memories", json={"content": "Alice's locker code is 1234"})
        assert created.status_code == 201
        hits = admin.post("/v1/users/alice/search", json={"query": "locker code"}).json()["hits"]
        assert hits[0]["memory"]["id"] == created.json()["id"]
    with server.client(server.keys.bob) as bob:
        assert bob.get("/v1/users/alice/memories").status_code == 403
        assert bob.get(f"/v1/users/bob/memories/{created.json()['id']}").status_code == 404
    with server.client(server.keys.other_tenant_admin) as other:
        assert other.get("/v1/users/alice/memories").json()["memories"] == []
    with server.client(server.keys.revoked) as revoked:
        assert revoked.get("/v1/users/alice/memories").status_code == 401


def test_row_level_security_hides_other_users_rows(pg: tuple[Server, str]) -> None:
    server, app_url = pg
    with server.client(server.keys.admin) as admin:
        admin.post("/v1/users/carol/memories", json={"content": "Carol's secret recipe"})
    with psycopg.connect(app_url, autocommit=False) as conn:
        conn.execute("SELECT set_config('app.user_id', %s, true)", ("acme:bob",))
        seen_as_bob = conn.execute("SELECT count(*) FROM memories WHERE content LIKE 'Carol%'").fetchone()
        conn.rollback()
        conn.execute("SELECT set_config('app.user_id', %s, true)", ("acme:carol",))
        seen_as_carol = conn.execute("SELECT count(*) FROM memories WHERE content LIKE 'Carol%'").fetchone()
    assert seen_as_bob == (0,) and seen_as_carol == (1,)
