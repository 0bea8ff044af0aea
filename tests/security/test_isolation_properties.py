"""Property-based isolation: whatever sequence of operations users run, through the Python API, REST or
MCP, nothing of one user is read by, written for, changed or deleted by another.

Hypothesis draws sequences of (actor, operation, target) where targets include other users' memory
ids, entity names and path users; afterwards every user's memories, entities and facts must carry
only that user's own tag, and every read must return only the reader's rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memstrata import SearchFilter
from memstrata.memory import Memory
from memstrata.server.app import create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig
from tests.security.conftest import Backend
from tests.server.conftest import serve

USERS = ("acme:u0", "acme:u1", "globex:u2")
OPS = ("add", "learn", "update", "forget", "search", "fact", "entity")
PROPERTY = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
_run = itertools.count()

operations = st.lists(
    st.tuples(st.sampled_from(range(3)), st.sampled_from(OPS), st.sampled_from(range(3)), st.integers(0, 3)),
    min_size=1,
    max_size=12,
)


def tag(user: str, run: int) -> str:
    return f"tag{run}x{user.replace(':', 'q')}"


def apply_python(memory: Memory, steps: list[tuple[int, str, int, int]], run: int) -> None:
    for actor_index, op, target_index, n in steps:
        actor, target = USERS[actor_index], USERS[target_index]
        own = tag(actor, run)
        foreign = memory.list(scope=target, limit=5)
        try:
            if op == "add":
                memory.add(f"{own} note {n}", scope=actor, metadata={"owner": own})
            elif op == "learn":
                memory.learn(f"I live in {own}city{n}.", scope=actor)
            elif op == "update" and foreign:
                memory.update(foreign[n % len(foreign)].id, scope=actor, content=f"{own} overwrite")
            elif op == "forget" and foreign:
                memory.forget(foreign[n % len(foreign)].id, scope=actor)
            elif op == "search":
                assert all(h.memory.scope.user_id == actor for h in memory.search("note city", scope=actor, k=50))
            elif op == "fact":
                memory.set_fact("identity", f"k{n}", own, scope=actor)
            elif op == "entity":
                memory.upsert_entity(f"Ent{n}", scope=actor, summary=own)
        except Exception as exc:  # noqa: BLE001 - only memstrata's own refusals are allowed
            assert type(exc).__module__.startswith("memstrata"), exc


def assert_isolated(memory: Memory, run: int, *, survivors: dict[str, set[str]] | None = None) -> None:
    for user in USERS:
        others = [tag(u, run) for u in USERS if u != user]
        for record in memory.list(scope=user, limit=10_000, filters=SearchFilter(include_superseded=True)):
            assert record.scope.user_id == user
            assert not any(t in record.content for t in others), (user, record.content)
        for entity in memory.entities(scope=user):
            assert not any(t in (entity.summary or "") for t in others)
        for fact in memory.facts(scope=user):
            assert not any(t in fact.value for t in others)
        if survivors is not None:
            left = {r.id for r in memory.list(scope=user, limit=10_000)}
            assert survivors[user] <= left, "another user deleted this user's memory"


@PROPERTY
@given(steps=operations)
def test_python_api_isolation(backend: Backend, steps: list[tuple[int, str, int, int]]) -> None:
    run = next(_run)
    memory = shared_memory(backend)
    seeded = {u: {memory.add(f"{tag(u, run)} seed", scope=u).id} for u in USERS}
    apply_python(memory, steps, run)
    own_forgets = {USERS[a] for a, op, t, _ in steps if op == "forget" and a == t}
    assert_isolated(memory, run, survivors={u: (set() if u in own_forgets else ids) for u, ids in seeded.items()})


_MEMORIES: dict[int, Memory] = {}


def shared_memory(backend: Backend) -> Memory:
    """One Memory per backend instance across the examples of a property (opening one is slow)."""
    key = id(backend)
    if key not in _MEMORIES:
        _MEMORIES[key] = backend.memory()
        backend.opened.append(_MEMORIES[key].store)
    return _MEMORIES[key]


# -- REST and MCP: keys bound to users ------------------------------------------------------------


@pytest.fixture
def served(backend: Backend) -> Iterator[tuple[str, Memory, dict[str, str]]]:
    memory = backend.memory()
    ring = KeyRing(memory.store)
    keys = {user: ring.create(user.split(":")[0], user=user.split(":")[1], name=user)[1] for user in USERS}
    with serve(create_app(memory=memory, config=ServerConfig(worker=False))) as url:
        yield url, memory, keys


rest_steps = st.lists(
    st.tuples(
        st.sampled_from(range(3)),
        st.sampled_from(("add", "patch", "delete", "search", "list", "entity")),
        st.sampled_from(range(3)),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=10,
)


def rest_call(client: httpx.Client, op: str, own: str, memory_id: str, n: int) -> httpx.Response:
    if op == "add":
        return client.post("/memories", json={"content": f"{own} note {n}"})
    if op == "patch":
        return client.patch(f"/memories/{memory_id}", json={"content": f"{own} x"})
    if op == "delete":
        return client.delete(f"/memories/{memory_id}")
    if op == "search":
        return client.post("/search", json={"query": "seed note"})
    if op == "list":
        return client.get("/memories")
    return client.put(f"/entities/Ent{n}", json={"summary": own})


@PROPERTY
@given(steps=rest_steps)
def test_rest_isolation(served: tuple[str, Memory, dict[str, str]], steps: list[tuple[int, str, int, int]]) -> None:
    url, memory, keys = served
    run = next(_run)
    seeded = {u: {memory.add(f"{tag(u, run)} seed", scope=u).id} for u in USERS}
    for actor_index, op, target_index, n in steps:
        actor, target = USERS[actor_index], USERS[target_index]
        path_user = target.split(":")[1]  # the path names the target; the key is the actor's
        foreign = [r.id for r in memory.list(scope=target, limit=5)] or ["none"]
        with httpx.Client(
            base_url=f"{url}/v1/users/{path_user}", timeout=30, headers={"Authorization": f"Bearer {keys[actor]}"}
        ) as client:
            response = rest_call(client, op, tag(actor, run), foreign[n % len(foreign)], n)
        assert response.status_code < 500
        if actor != target:
            assert response.status_code in (403, 404), (op, response.status_code, response.text)
        elif op in ("search", "list"):
            rows = own_rows(response, actor)
            if op == "list":  # the newest of the actor's notes, of this example or (after a delete) earlier ones
                own_suffix = tag(actor, 0).removeprefix("tag0")
                assert all(own_suffix in row["content"] for row in rows), response.text
    deletes = {USERS[a] for a, op, t, _ in steps if op == "delete" and a == t}
    assert_isolated(memory, run, survivors={u: (set() if u in deletes else ids) for u, ids in seeded.items()})


def own_rows(response: httpx.Response, actor: str) -> list[dict[str, Any]]:
    """The memories a search or list answered, after checking that every one is the actor's: its
    user, and no other user's tag of any example."""
    body = response.json()
    rows: list[dict[str, Any]] = [hit["memory"] for hit in body["hits"]] if "hits" in body else body["memories"]
    assert all(row["user_id"] == actor.split(":")[1] for row in rows), response.text
    others = [tag(u, 0).removeprefix("tag0") for u in USERS if u != actor]  # "x<user>", the end of every tag
    assert not any(other in response.text for other in others), response.text
    return rows


@PROPERTY
@given(steps=st.lists(st.tuples(st.sampled_from(range(3)), st.sampled_from(range(3))), min_size=1, max_size=6))
def test_mcp_isolation(served: tuple[str, Memory, dict[str, str]], steps: list[tuple[int, int]]) -> None:
    url, memory, keys = served
    run = next(_run)
    seeded = {u: memory.add(f"{tag(u, run)} seed", scope=u).id for u in USERS}

    async def session(actor: str, target: str) -> list[Any]:
        headers = {"Authorization": f"Bearer {keys[actor]}", "X-Memstrata-User": target.split(":")[1]}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            own = tag(actor, run)
            return [
                await client.call_tool("add_memory", {"content": f"{own} via mcp"}),
                await client.call_tool("forget_memory", {"memory_id": seeded[target]}),
                await client.call_tool("search_memories", {"query": "seed via mcp", "k": 20}),
            ]

    for actor_index, target_index in steps:
        actor, target = USERS[actor_index], USERS[target_index]
        results = anyio.run(session, actor, target)
        found = str(results[2].structured_content)
        assert not any(tag(u, run) in found for u in USERS if u != actor)
        if actor == target:
            seeded[target] = memory.add(f"{tag(target, run)} seed", scope=target).id
    assert_isolated(memory, run, survivors={u: {i} for u, i in seeded.items()})
