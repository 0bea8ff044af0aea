"""One JSON shape of a memory: REST, MCP, the client's decoder and the export document use `MemoryJSON`."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

from memstrata.client import MemoryClient
from memstrata.export_format import MemoryJSON
from memstrata.models import Scope

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
