"""What every key role reads back, on every REST route and every MCP tool, over real HTTP.

Alice's memories, profile facts (with previous values), user context, entities, procedures and session
turns carry secret markers, and so does the data of another user of the tenant and of another tenant.
Every key of every role calls every operation — the routes enumerated from the app's OpenAPI document,
the tools from the MCP server's tool list, each of which must have a request in `REQUESTS` / `TOOL_CALLS`
(an operation added later fails here until it gets one) — and every response body, errors included, is
read for what the key may not see:

* alice's markers only for a key that may read stored data (`read`, or `export`, which hands out all
  of it); a write-only key gets ids and counts, nothing more (every string it reads is an id or what
  it sent itself);
* the other user's markers never (every call acts on alice), and the other user's id only for a
  tenant-wide key holding `read` (the user list); the other tenant's markers never.

Alice's data is seeded again before each key's run, so that erasure and forgetting by one key do not
hide a leak of the next; an allowed call must succeed (2xx), so each response is a real answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memstrata import namespaces
from memstrata.memory import Memory
from memstrata.models import Scope
from memstrata.server.app import create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig
from memstrata.server.mcp import PERMISSION_META
from memstrata.server.roles import Permission, Role, permissions_of

from .conftest import TENANT, open_memory, serve

ALICE = "alice"
OTHER_USER = "zoe-other-user"
OTHER_TENANT = "globex"

ALICE_MARKERS = {
    "memory": "SECRET-MEM-ALICE-5521",
    "old fact value": "SECRET-FACT-OLD-9134",
    "fact value": "SECRET-FACT-NOW-2287",
    "user context": "SECRET-CTX-ALICE-6610",
    "preference": "SECRET-PREF-ALICE-0413",
    "entity summary": "SECRET-ENTITY-ALICE-7745",
    "procedure": "SECRET-PROC-ALICE-3306",
    "session turn": "SECRET-TURN-ALICE-8852",
    "metadata": "SECRET-META-ALICE-1199",
}
OTHER_MARKERS = {"other user's memory": "SECRET-MEM-ZOE-4471", "other user's fact": "SECRET-FACT-ZOE-5502"}
TENANT_MARKERS = {"other tenant's memory": "SECRET-MEM-GLOBEX-6683"}

KEY_SPECS: list[tuple[str, Role, str | None, tuple[Permission, ...]]] = [
    ("admin", Role.ADMIN, None, ()),
    ("user", Role.USER, ALICE, ()),
    ("read-only", Role.READ_ONLY, ALICE, ()),
    ("read-only tenant-wide", Role.READ_ONLY, None, ()),
    ("ingest-only", Role.INGEST_ONLY, ALICE, ()),
    ("ingest-only tenant-wide", Role.INGEST_ONLY, None, ()),
    ("ingest-only + erase", Role.INGEST_ONLY, ALICE, (Permission.ERASE,)),
    ("privacy", Role.PRIVACY, ALICE, ()),
    ("privacy tenant-wide", Role.PRIVACY, None, ()),
    ("read-only + export", Role.READ_ONLY, ALICE, (Permission.EXPORT,)),
]


@dataclass(frozen=True)
class Key:
    label: str
    token: str
    user: str | None
    permissions: frozenset[Permission]

    @property
    def sees_data(self) -> bool:
        return bool({Permission.READ, Permission.EXPORT} & self.permissions)

    @property
    def sees_other_users(self) -> bool:
        return self.user is None and Permission.READ in self.permissions


@dataclass
class Seeded:
    """Ids of alice's seeded data, known after each seeding."""

    memory_id: str
    receipt_id: str
    export: dict[str, Any]
    job_id: str


@dataclass
class MatrixServer:
    url: str
    memory: Memory
    keys: list[Key]
    operations: list[tuple[str, str, str | None]]
    """(method, path, permission or None for a public route) of every operation in the OpenAPI document."""
    seeded: list[Seeded] = field(default_factory=list)

    def seed(self) -> Seeded:
        seeded = seed_alice(self.memory)
        self.seeded.append(seeded)
        return seeded


def seed_alice(memory: Memory) -> Seeded:
    """Alice's data, afresh: erased first (which also leaves a receipt the receipt route can read)."""
    store_id = f"{TENANT}:{ALICE}"
    receipt = memory.erase_user(scope=store_id)
    record = memory.add(
        f"Alice's locker code is {ALICE_MARKERS['memory']}",
        scope=store_id,
        metadata={"note": ALICE_MARKERS["metadata"]},
    )
    memory.set_fact("food", "diet", ALICE_MARKERS["old fact value"], scope=store_id)
    memory.set_fact("food", "diet", ALICE_MARKERS["fact value"], scope=store_id)
    memory.upsert_entity("Zed", scope=store_id, type="person", summary=f"Zed is {ALICE_MARKERS['entity summary']}")
    memory.add_procedure("pack", scope=store_id, instruction=f"Always {ALICE_MARKERS['procedure']}")
    session = Scope(user_id=store_id, session_id="s1")
    memory.add_messages(
        [{"role": "user", "content": f"The gate word is {ALICE_MARKERS['session turn']}"}], scope=session
    )
    context = {"facts": [ALICE_MARKERS["user context"]], "preferences": {"drink": ALICE_MARKERS["preference"]}}
    memory.store.put_item(store_id, namespaces.USER_CONTEXT, "user", context)
    export = json.loads(memory.export_user(scope=store_id).to_json())
    job_id = memory.learn_later([{"role": "user", "content": "I moved to Lisbon."}], scope=store_id)
    return Seeded(record.id, receipt.request_id, export, job_id)


def seed_others(memory: Memory) -> None:
    other = f"{TENANT}:{OTHER_USER}"
    memory.add("Zoe's code is " + OTHER_MARKERS["other user's memory"], scope=other)
    memory.set_fact("food", "diet", OTHER_MARKERS["other user's fact"], scope=other)
    memory.add("Globex secret " + TENANT_MARKERS["other tenant's memory"], scope=f"{OTHER_TENANT}:{ALICE}")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MatrixServer]:
    path: Path = tmp_path_factory.mktemp("matrix") / "memstrata.db"
    memory = open_memory(path)
    ring = KeyRing(memory.store)
    keys = []
    for label, role, user, grants in KEY_SPECS:
        _, token = ring.create(TENANT, user=user, role=role, grants=grants, name=label)
        keys.append(Key(label, token, user, permissions_of(role, grants)))
    seed_others(memory)
    config = ServerConfig(auth=True, worker=False, rate_limit="100000/minute", auth_failure_limit="100000/minute")
    app = create_app(memory=memory, config=config)
    try:
        with serve(app) as url:
            yield MatrixServer(url, memory, keys, operations(app))
    finally:
        memory.close()


def operations(app: Any) -> list[tuple[str, str, str | None]]:
    found = []
    for path, methods in app.openapi()["paths"].items():
        for method, operation in methods.items():
            found.append((method.upper(), path, operation.get("x-memstrata-permission")))
    return found


# -- the requests ----------------------------------------------------------------
Request = Callable[[Seeded], dict[str, Any]]
MESSAGE = [{"role": "user", "content": "I drink tea every morning"}]

REQUESTS: dict[str, Request] = {
    # reads and writes first, then what deletes, erasure last (the table's order is the call order)
    "GET /healthz": lambda s: {},
    "GET /metrics": lambda s: {},
    "GET /v1/whoami": lambda s: {},
    "GET /v1/users": lambda s: {},
    "GET /v1/queue": lambda s: {},
    "GET /v1/audit": lambda s: {},
    "GET /v1/users/{user_id}/memories": lambda s: {},
    "GET /v1/users/{user_id}/memories/{memory_id}": lambda s: {},
    "GET /v1/users/{user_id}/memories/{memory_id}/history": lambda s: {},
    "POST /v1/users/{user_id}/search": lambda s: {"json": {"query": "locker code"}},
    "GET /v1/users/{user_id}/profile/facts": lambda s: {},
    "GET /v1/users/{user_id}/entities": lambda s: {},
    "GET /v1/users/{user_id}/entities/{name}": lambda s: {},
    "GET /v1/users/{user_id}/procedures": lambda s: {"params": {"task": "pack"}},
    "GET /v1/users/{user_id}/jobs/{job_id}": lambda s: {},
    "GET /v1/users/{user_id}/sessions": lambda s: {},
    "GET /v1/users/{user_id}/sessions/{session_id}": lambda s: {},
    "GET /v1/users/{user_id}/profile": lambda s: {},
    "POST /v1/users/{user_id}/context": lambda s: {"json": {"query": "locker code"}},
    "GET /v1/users/{user_id}/export": lambda s: {},
    "GET /v1/users/{user_id}/erasures/{request_id}": lambda s: {},
    "POST /v1/users/{user_id}/memories": lambda s: {"json": {"content": "Alice waters the plants"}},
    "PATCH /v1/users/{user_id}/memories/{memory_id}": lambda s: {"json": {"importance": 0.9}},
    "PUT /v1/users/{user_id}/profile/facts/{category}/{key}": lambda s: {"json": {"value": "vegan"}},
    "PUT /v1/users/{user_id}/entities/{name}": lambda s: {"json": {"type": "person"}},
    "POST /v1/users/{user_id}/procedures": lambda s: {"json": {"task": "pack", "instruction": "fold shirts"}},
    "POST /v1/users/{user_id}/learn": lambda s: {"json": {"messages": MESSAGE}},
    "POST /v1/users/{user_id}/sessions/{session_id}/messages": lambda s: {"json": {"messages": MESSAGE}},
    "POST /v1/users/{user_id}/sessions/{session_id}/end": lambda s: {"json": {}},
    "POST /v1/users/{user_id}/consolidate": lambda s: {"json": {"older_than_days": 0, "min_count": 1, "dry_run": True}},
    "POST /v1/users/{user_id}/import": lambda s: {"json": s.export},
    "POST /v1/users/{user_id}/memories/{memory_id}/supersede": lambda s: {"json": {"content": "Alice moved desks"}},
    "DELETE /v1/users/{user_id}/memories/{memory_id}": lambda s: {},
    "DELETE /v1/users/{user_id}/profile/facts/{category}/{key}": lambda s: {},
    "DELETE /v1/users/{user_id}/sessions/{session_id}": lambda s: {},
    "DELETE /v1/users/{user_id}": lambda s: {},
}


def concrete(path: str, seeded: Seeded) -> str:
    values = {
        "user_id": ALICE,
        "memory_id": seeded.memory_id,
        "request_id": seeded.receipt_id,
        "category": "food",
        "key": "diet",
        "name": "Zed",
        "session_id": "s1",
        "job_id": seeded.job_id,
    }
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)


TOOL_CALLS: dict[str, Request] = {
    "search_memories": lambda s: {"query": "locker code"},
    "get_memory": lambda s: {"memory_id": s.memory_id},
    "list_memories": lambda s: {},
    "memory_history": lambda s: {"memory_id": s.memory_id},
    "get_context": lambda s: {"query": "locker code"},
    "get_profile": lambda s: {},
    "list_entities": lambda s: {},
    "lookup_entity": lambda s: {"name": "Zed"},
    "find_procedures": lambda s: {"task": "pack"},
    "get_session": lambda s: {"session_id": "s1"},
    "get_user_context": lambda s: {},
    "export_memories": lambda s: {},
    "add_memory": lambda s: {"content": "Alice waters the plants"},
    "update_memory": lambda s: {"memory_id": s.memory_id, "importance": 0.9},
    "set_profile_fact": lambda s: {"category": "food", "key": "diet", "value": "vegan"},
    "add_procedure": lambda s: {"task": "pack", "instruction": "fold shirts"},
    "learn": lambda s: {"messages": MESSAGE},
    "add_session_messages": lambda s: {"session_id": "s1", "messages": MESSAGE},
    "end_session": lambda s: {"session_id": "s1"},
    "supersede_memory": lambda s: {"memory_id": s.memory_id, "content": "Alice moved desks"},
    "forget_memory": lambda s: {"memory_id": s.memory_id},
    "delete_profile_fact": lambda s: {"category": "food", "key": "diet"},
}


# -- what a body may hold ------------------------------------------------------------
def strings(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


def not_ids_or_counts(value: Any, sent: set[str], name: str = "") -> list[str]:
    """Where a body holds anything but ids, counts, flags and strings the caller sent itself."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in not_ids_or_counts(v, sent, str(k))]
    if isinstance(value, list):
        return [p for v in value for p in not_ids_or_counts(v, sent, name)]
    if value is None or isinstance(value, bool | int):
        return []
    if isinstance(value, str) and (name == "id" or name.endswith(("_id", "_ids")) or value in sent):
        return []
    return [f"{name}={value!r}"]


def problems(key: Key, where: str, text: str) -> list[str]:
    found = [f"{where}: {label}" for label, marker in {**OTHER_MARKERS, **TENANT_MARKERS}.items() if marker in text]
    if not key.sees_data:
        found += [f"{where}: alice's {label}" for label, marker in ALICE_MARKERS.items() if marker in text]
    if OTHER_USER in text and not key.sees_other_users:
        found.append(f"{where}: the other user's id")
    return found


def allowed(key: Key, permission: str | None, public: bool) -> bool:
    return public or permission is None or Permission(permission) in key.permissions


# -- REST --------------------------------------------------------------------------
def test_every_operation_has_a_request_in_the_matrix(matrix: MatrixServer) -> None:
    published = {f"{method} {path}" for method, path, _ in matrix.operations}
    assert published == set(REQUESTS), (
        f"operations without a request here: {sorted(published - set(REQUESTS))}; "
        f"requests for no operation: {sorted(set(REQUESTS) - published)}"
    )


def rest_run(matrix: MatrixServer, key: Key) -> list[str]:
    found: list[str] = []
    seeded = matrix.seed()
    permission_of = {f"{m} {p}": (perm, p in ("/healthz", "/metrics")) for m, p, perm in matrix.operations}
    with httpx.Client(base_url=matrix.url, headers={"Authorization": f"Bearer {key.token}"}, timeout=30) as client:
        for operation, request in REQUESTS.items():
            method, path = operation.split(" ", 1)
            arguments = request(seeded)
            response = client.request(method, concrete(path, seeded), **arguments)
            where = f"{key.label} {operation} ({response.status_code})"
            permission, public = permission_of[operation]
            if allowed(key, permission, public):
                assert 200 <= response.status_code < 300, f"{where}: {response.text[:300]}"
            else:
                assert response.status_code == 403, where
            found += problems(key, where, response.text)
            if not key.sees_data and permission == "write" and response.content:
                sent = strings(arguments) | {ALICE, seeded.memory_id, "food", "diet", "Zed", "s1"}
                found += [f"{where}: {p}" for p in not_ids_or_counts(response.json(), sent)]
    return found


@pytest.mark.parametrize("label", [spec[0] for spec in KEY_SPECS])
def test_rest_bodies_hold_only_what_the_role_may_see(matrix: MatrixServer, label: str) -> None:
    key = next(k for k in matrix.keys if k.label == label)
    found = rest_run(matrix, key)
    assert not found, "\n".join(found)


def test_a_reader_still_reads_everything_back(matrix: MatrixServer) -> None:
    """The rule withholds from write-only keys only: the same writes answer a user key in full."""
    seeded = matrix.seed()
    user = next(k for k in matrix.keys if k.label == "user")
    with httpx.Client(base_url=matrix.url, headers={"Authorization": f"Bearer {user.token}"}, timeout=30) as client:
        updated = client.patch(f"/v1/users/alice/memories/{seeded.memory_id}", json={"importance": 0.8}).json()
        fact = client.put("/v1/users/alice/profile/facts/food/diet", json={"value": "vegan"}).json()
    assert ALICE_MARKERS["memory"] in updated["content"] and updated["importance"] == 0.8
    assert ALICE_MARKERS["fact value"] in json.dumps(fact["previous"])


# -- MCP ---------------------------------------------------------------------------
async def mcp_run(url: str, key: Key, seeded: Seeded) -> tuple[set[str], list[str]]:
    found: list[str] = []
    headers = {"Authorization": f"Bearer {key.token}", "X-Memstrata-User": ALICE}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, call in TOOL_CALLS.items():
            if name not in tools:
                continue
            arguments = call(seeded)
            result = await client.call_tool(name, arguments)
            permission = (tools[name].meta or {}).get(PERMISSION_META)
            text = json.dumps(result.structured_content) + "".join(getattr(c, "text", "") for c in result.content)
            where = f"{key.label} mcp:{name} ({'error' if result.is_error else 'ok'})"
            if allowed(key, permission, False):
                assert not result.is_error, f"{where}: {text[:300]}"
            else:
                assert result.is_error, where
            found += problems(key, where, text)
            if not key.sees_data and permission == "write" and not result.is_error:
                sent = strings(arguments) | {ALICE, seeded.memory_id}
                found += [f"{where}: {p}" for p in not_ids_or_counts(result.structured_content, sent)]
                for block in result.content:
                    found += [f"{where} (text): {p}" for p in not_ids_or_counts(json.loads(block.text), sent)]  # type: ignore[union-attr]
    return set(tools), found


def test_every_tool_has_a_call_in_the_matrix(matrix: MatrixServer) -> None:
    admin = next(k for k in matrix.keys if k.label == "admin")
    tools, _ = anyio.run(mcp_run, matrix.url, admin, matrix.seed())
    assert tools == set(TOOL_CALLS), (
        f"tools without a call here: {sorted(tools - set(TOOL_CALLS))}; "
        f"calls of no tool: {sorted(set(TOOL_CALLS) - tools)}"
    )


@pytest.mark.parametrize("label", [spec[0] for spec in KEY_SPECS])
def test_mcp_results_hold_only_what_the_role_may_see(matrix: MatrixServer, label: str) -> None:
    key = next(k for k in matrix.keys if k.label == label)
    _, found = anyio.run(mcp_run, matrix.url, key, matrix.seed())
    assert not found, "\n".join(found)
