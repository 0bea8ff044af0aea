"""Roles of API keys on every REST route and every MCP tool, allowed and refused.

The matrix is generated: the routes come from the app's route table with the permission each declares
in OpenAPI (`x-memstrata-permission`), the tools from the MCP server's tool list with the permission in
their `_meta`; every key of every role calls every one of them over real HTTP. A route or tool added
later is covered without editing this file, and one that declares no permission fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memstrata.errors import InvalidInput
from memstrata.server.app import create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig
from memstrata.server.mcp import PERMISSION_META
from memstrata.server.roles import Permission, Role, permissions_of
from memstrata.storage.base import MemoryFilter

from .conftest import TENANT, open_memory, serve


@dataclass(frozen=True)
class RoleKey:
    label: str
    token: str
    user: str | None
    permissions: frozenset[Permission]


KEY_SPECS: list[tuple[str, Role, str | None, tuple[Permission, ...]]] = [
    ("admin", Role.ADMIN, None, ()),
    ("user", Role.USER, "alice", ()),
    ("read-only", Role.READ_ONLY, "alice", ()),
    ("read-only tenant-wide", Role.READ_ONLY, None, ()),
    ("ingest-only", Role.INGEST_ONLY, "alice", ()),
    ("ingest-only tenant-wide", Role.INGEST_ONLY, None, ()),
    ("privacy", Role.PRIVACY, "alice", ()),
    ("read-only + export", Role.READ_ONLY, "alice", (Permission.EXPORT,)),
]


@dataclass
class RoleServer:
    url: str
    keys: list[RoleKey]
    store_path: Path
    app_routes: list[tuple[str, str, str | None]]
    """(method, path, permission) of every /v1 route."""

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def v1_routes(app: Any) -> list[tuple[str, str, str | None]]:
    """Every /v1 operation of the app's route table, as published in its OpenAPI document."""
    routes = []
    for path, operations in app.openapi()["paths"].items():
        if not path.startswith("/v1"):
            continue
        for method, operation in operations.items():
            assert "x-memstrata-permission" in operation, f"{method} {path} declares no permission"
            routes.append((method.upper(), path, operation["x-memstrata-permission"]))
    return routes


@pytest.fixture(scope="module")
def role_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoleServer]:
    path = tmp_path_factory.mktemp("roles") / "memstrata.db"
    memory = open_memory(path)
    ring = KeyRing(memory.store)
    keys = []
    for label, role, user, grants in KEY_SPECS:
        _, token = ring.create(TENANT, user=user, role=role, grants=grants, name=label)
        keys.append(RoleKey(label, token, user, permissions_of(role, grants)))
    app = create_app(memory=memory, config=ServerConfig(auth=True))
    try:
        with serve(app) as url:
            yield RoleServer(url, keys, path, v1_routes(app))
    finally:
        memory.close()


def concrete(path: str, user: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: user if m.group(1) == "user_id" else "x", path)


def test_every_route_and_tool_declares_a_permission(role_server: RoleServer) -> None:
    declared = {permission for _, _, permission in role_server.app_routes}
    assert declared <= {None, *(p.value for p in Permission)}  # None: whoami (any valid key)
    assert {None, "read", "write", "export", "erase"} <= declared
    assert len(role_server.app_routes) >= 30


def test_rest_matrix_every_role_on_every_route(role_server: RoleServer) -> None:
    outcomes: list[str] = []
    for key in role_server.keys:
        with role_server.client(key.token) as client:
            for method, path, permission in role_server.app_routes:
                body: dict[str, Any] | None = {} if method in {"POST", "PUT", "PATCH"} else None
                status = client.request(method, concrete(path, "alice"), json=body).status_code
                allowed = permission is None or Permission(permission) in key.permissions
                if allowed:
                    assert status not in (401, 403), f"{key.label} refused {method} {path}: {status}"
                else:
                    assert status == 403, f"{key.label} allowed {method} {path}: {status}"
                outcomes.append("allowed" if allowed else "refused")
                if key.user is not None and "{user_id}" in path:  # never another user, whatever the role
                    other = client.request(method, concrete(path, "bob"), json=body).status_code
                    assert other == 403, f"{key.label} reached bob via {method} {path}: {other}"
    assert outcomes.count("allowed") > 50 and outcomes.count("refused") > 50


def test_refused_write_stores_nothing_and_ingest_cannot_read_back(role_server: RoleServer) -> None:
    by_label = {k.label: k for k in role_server.keys}
    with role_server.client(by_label["read-only"].token) as reader:
        refused = reader.post("/v1/users/carol/memories", json={"content": "Carol likes tea"})
    assert refused.status_code == 403  # bound to alice
    with role_server.client(by_label["read-only tenant-wide"].token) as reader:
        refused = reader.post("/v1/users/carol/memories", json={"content": "Carol likes tea"})
        assert refused.status_code == 403 and "'write' permission" in refused.json()["detail"]
        assert reader.get("/v1/users/carol/memories").json()["memories"] == []
    with role_server.client(by_label["ingest-only tenant-wide"].token) as ingest:
        added = ingest.post("/v1/users/carol/memories", json={"content": "Carol likes green tea"})
        assert added.status_code == 201
        assert ingest.get("/v1/users/carol/memories").status_code == 403
        assert ingest.post("/v1/users/carol/search", json={"query": "tea"}).status_code == 403
        assert ingest.get("/v1/users/carol/export").status_code == 403
    with role_server.client(by_label["admin"].token) as admin:
        items = admin.get("/v1/users/carol/memories").json()["memories"]
    assert [m["content"] for m in items] == ["Carol likes green tea"]


def test_openapi_lists_the_permission_of_each_operation(role_server: RoleServer) -> None:
    with httpx.Client(base_url=role_server.url) as anonymous:
        schema = anonymous.get("/openapi.json").json()
    export = schema["paths"]["/v1/users/{user_id}/export"]["get"]
    assert export["x-memstrata-permission"] == "export"
    assert export["security"] == [{"HTTPBearer": ["export"]}]
    assert "**Needs:** the `export` permission" in export["description"]
    assert schema["paths"]["/v1/users/{user_id}/memories"]["post"]["x-memstrata-permission"] == "write"


def test_key_creation_refuses_bad_roles(role_server: RoleServer) -> None:
    memory = open_memory(role_server.store_path)
    try:
        ring = KeyRing(memory.store)
        with pytest.raises(InvalidInput, match="bound to one user"):
            ring.create(TENANT, role="user")
        with pytest.raises(InvalidInput, match="admin key acts for the whole tenant"):
            ring.create(TENANT, user="alice", role="admin")
        with pytest.raises(InvalidInput, match="unknown role"):
            ring.create(TENANT, role="superuser")
        with pytest.raises(InvalidInput, match="cannot be granted"):
            ring.create(TENANT, user="alice", role="read-only", grants=["admin"])
    finally:
        memory.close()


# -- MCP -----------------------------------------------------------------------
def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Minimal arguments that pass the tool's input schema (so the call reaches the access rule)."""
    value = _sample(schema, schema.get("$defs", {}))
    assert isinstance(value, dict)
    return value


def _sample(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _sample(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"]
            return _sample(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "peanuts"
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}), defs)] * max(1, schema.get("minItems", 1))
    required = [name for name in schema.get("required", []) if name != "ctx"]
    return {name: _sample(schema["properties"][name], defs) for name in required}


async def _mcp_matrix(url: str, key: RoleKey) -> list[tuple[str, str, bool, str]]:
    headers = {"Authorization": f"Bearer {key.token}", "X-Memstrata-User": "alice"}
    rows = []
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        for tool in (await client.list_tools()).tools:
            permission = (tool.meta or {}).get(PERMISSION_META)
            result = await client.call_tool(tool.name, _arguments(tool.input_schema))
            text = result.content[0].text if result.is_error and result.content else ""  # type: ignore[union-attr]
            rows.append((tool.name, str(permission), result.is_error, text))
    return rows


def test_mcp_matrix_every_role_on_every_tool(role_server: RoleServer) -> None:
    seen_tools: set[str] = set()
    for key in role_server.keys:
        for tool, permission, is_error, text in anyio.run(_mcp_matrix, role_server.url, key):
            assert permission in {p.value for p in Permission}, f"tool {tool} declares no permission"
            seen_tools.add(tool)
            if Permission(permission) in key.permissions:
                assert "permission" not in text, f"{key.label} refused tool {tool}: {text}"
            else:
                assert is_error and f"lacks the '{permission}' permission" in text, f"{key.label} ran {tool}"
    assert {"add_memory", "search_memories", "get_context", "forget_memory"} <= seen_tools


def test_mcp_ingest_key_stores_but_cannot_search(role_server: RoleServer) -> None:
    ingest = next(k for k in role_server.keys if k.label == "ingest-only")

    async def steps(client: Client) -> tuple[Any, Any]:
        added = await client.call_tool("add_memory", {"content": "Alice keeps bees"})
        found = await client.call_tool("search_memories", {"query": "bees"})
        return added, found

    async def run() -> tuple[Any, Any]:
        headers = {"Authorization": f"Bearer {ingest.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{role_server.url}/mcp", http_client=http)) as client,
        ):
            return await steps(client)

    added, found = anyio.run(run)
    assert not added.is_error and found.is_error
    memory = open_memory(role_server.store_path)
    try:
        stored = [r.content for r in memory.store.list_memories("acme:alice", MemoryFilter(), limit=100)]
    finally:
        memory.close()
    assert "Alice keeps bees" in stored
