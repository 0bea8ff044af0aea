"""One JSON shape per type: REST, MCP, the client's decoder, the CLI and the export document use the
models of `memstrata.shapes` (`MemoryJSON` for a memory, `MemoryListJSON` for a page of them)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio
import pytest
from mcp import Client

from memstrata import cli
from memstrata.client import MemoryClient
from memstrata.export_format import MemoryJSON
from memstrata.models import Scope
from memstrata.shapes import MemoryListJSON

from .conftest import Server
from .test_mcp import http_session

KEYS = set(MemoryJSON.model_fields)


def test_rest_mcp_client_and_export_share_the_keys_of_a_memory(server: Server) -> None:
    scope = Scope("acme:alice", agent_id="acme:assistant-1", session_id="s-shape")
    stored = server.memory.add("Alice keeps bees on her roof", scope=scope, kind="fact", metadata={"src": "t"})

    with server.client(server.keys.admin) as admin:
        rest = admin.get(f"/v1/users/alice/memories/{stored.id}").json()

    async def steps(client: Client) -> Any:
        return await client.call_tool("get_memory", {"memory_id": stored.id})

    headers = {"Authorization": f"Bearer {server.keys.alice}"}
    mcp = anyio.run(http_session, server.url, headers, steps).structured_content
    exported = server.memory.export_user(scope="acme:alice").model_dump(mode="json")["memories"]
    [in_export] = [m for m in exported if m["id"] == stored.id]

    assert set(rest) == set(mcp) == set(in_export) == KEYS
    # the same memory, in the ids each reader knows: the API's over REST and MCP, the store's in an export
    assert rest == mcp and rest["user_id"] == "alice" and rest["agent_id"] == "assistant-1"
    assert in_export["user_id"] == "acme:alice" and in_export["agent_id"] == "acme:assistant-1"
    assert {k: v for k, v in rest.items() if k not in ("user_id", "agent_id")} == {
        k: v for k, v in in_export.items() if k not in ("user_id", "agent_id")
    }

    with MemoryClient(server.url, api_key=server.keys.admin) as client:
        decoded = client.get(stored.id, scope="alice")
    assert MemoryJSON.of(decoded).model_dump(mode="json") == rest  # the decoder reads every key back


def test_a_list_of_memories_has_one_shape_over_rest_mcp_and_the_cli(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    scope = Scope("acme:alice", session_id="s-list-shape")
    stored = [server.memory.add(f"Alice's list-shape note {i}", scope=scope, kind="note") for i in range(3)]
    ids = {r.id for r in stored}

    with server.client(server.keys.admin) as admin:
        rest = admin.get("/v1/users/alice/memories", params={"kinds": "note", "limit": 2}).json()

    async def steps(client: Client) -> Any:
        return await client.call_tool("list_memories", {"filters": {"kinds": ["note"]}, "limit": 2})

    headers = {"Authorization": f"Bearer {server.keys.alice}"}
    mcp = anyio.run(http_session, server.url, headers, steps).structured_content
    store = server.memory.store.url  # type: ignore[attr-defined]
    argv = ["--store", store, "--embedder", "hashing:64", "list", "--user", "acme:alice", "--kind", "note"]
    assert cli.main([*argv, "--limit", "2", "--json"]) == 0
    on_cli = json.loads(capsys.readouterr().out)

    assert set(rest) == set(mcp) == set(on_cli) == set(MemoryListJSON.model_fields) == {"memories", "next_offset"}
    assert rest == mcp  # the same page in the API's ids
    assert rest["next_offset"] == on_cli["next_offset"] == 2
    for listed in (rest, on_cli):
        assert all(set(m) == KEYS for m in listed["memories"])
        assert [m["id"] for m in listed["memories"]] == [m["id"] for m in rest["memories"]]
    assert {m["id"] for m in rest["memories"]} <= ids
    assert [m["user_id"] for m in on_cli["memories"]] == ["acme:alice", "acme:alice"]  # the store's ids


def test_the_client_decodes_each_shape_into_the_object_memory_returns(server: Server) -> None:
    scope = Scope("acme:alice")
    server.memory.set_fact("garden", "crop", "tomatoes", scope=scope, source="test")
    server.memory.upsert_entity("Ravi", scope=scope, type="person", summary="Alice's neighbour", aliases=["Rav"])
    added = server.memory.add("Alice grows tomatoes with Ravi", scope=scope)
    server.memory.update(added.id, scope=scope, content="Alice grows cherry tomatoes with Ravi")

    with MemoryClient(server.url, api_key=server.keys.admin) as client:
        facts = client.facts(scope="alice", category="garden")
        entity = client.entity("Ravi", scope="alice")
        history = client.history(added.id, scope="alice")
        context = client.context("tomatoes", 400, scope="alice")

    assert facts == server.memory.facts(scope=scope, category="garden")
    assert entity == server.memory.entity("Ravi", scope=scope)
    # events name their owner by the id the reader asked with
    assert history == [replace(e, user_id="alice") for e in server.memory.history(added.id, scope=scope)]
    assert context == server.memory.context("tomatoes", 400, scope=scope)
