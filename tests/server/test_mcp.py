"""The MCP server with the official SDK's client: stdio (`memstrata mcp --user ...` in a subprocess) and
streamable HTTP (`/mcp` of the running server, scoped by the bearer key)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memstrata.memory import Memory
from memstrata.storage.base import MemoryFilter

from .conftest import Server, open_memory

TOOLS = {"add_memory", "search_memories", "get_context", "forget_memory", "lookup_entity", "get_profile"}


def contents(memory: Memory, store_user: str) -> list[str]:
    return [r.content for r in memory.store.list_memories(store_user, MemoryFilter(), limit=1000)]


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    return result


# -- stdio -------------------------------------------------------------------
def test_stdio_tools_act_on_the_configured_user(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    open_memory(db).close()  # create the store with the test embedder recorded
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memstrata",
            "--store",
            f"sqlite:///{db}",
            "--embedder",
            "hashing:64",
            "mcp",
            "--user",
            "alice",
            "--tenant",
            "acme",
        ],  # fmt: skip
    )

    async def session() -> dict[str, Any]:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool("add_memory", {"content": "Alice is allergic to peanuts", "kind": "fact"})
            found = await client.call_tool("search_memories", {"query": "peanuts allergy"})
            sneaky = await client.call_tool("add_memory", {"content": "written for bob?", "user_id": "bob"})
            forgotten = await client.call_tool("forget_memory", {"memory_id": added.structured_content["id"]})
            again = await client.call_tool("search_memories", {"query": "peanuts allergy"})
            profile = await client.call_tool("get_profile", {})
            missing = await client.call_tool("lookup_entity", {"name": "Nobody"})
            return locals()

    r = anyio.run(session)
    assert r["tools"] >= TOOLS
    assert r["added"].structured_content["content"] == "Alice is allergic to peanuts"
    assert r["found"].structured_content["hits"][0]["content"] == "Alice is allergic to peanuts"
    assert set(r["found"].structured_content["hits"][0]["scores"]) >= {"semantic", "keyword"}
    assert r["forgotten"].structured_content == {"id": r["added"].structured_content["id"], "forgotten": True}
    assert all("peanuts" not in h["content"] for h in r["again"].structured_content["hits"])
    assert r["profile"].structured_content == {"facts": []}
    assert r["missing"].is_error and "NotFound" in r["missing"].content[0].text
    assert not r["sneaky"].is_error  # an argument the tool does not declare is ignored...
    with Memory(store=f"sqlite:///{db}", embedder="hashing:64") as memory:
        assert contents(memory, "acme:alice") == ["written for bob?"]  # ...and the configured user wins
        assert contents(memory, "acme:bob") == [] and contents(memory, "bob") == []


# -- streamable HTTP -----------------------------------------------------------
async def http_session(url: str, headers: dict[str, str], steps: Any) -> Any:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        return await steps(client)


def test_http_tools_act_on_the_keys_user(server: Server) -> None:
    async def steps(client: Client) -> dict[str, Any]:
        tools = {t.name for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"content": "Alice's favourite editor is Helix"})
        hits = await client.call_tool("search_memories", {"query": "favourite editor", "k": 3})
        context = await client.call_tool("get_context", {"query": "which editor", "max_tokens": 200})
        return {"tools": tools, "added": added, "hits": hits, "context": context}

    headers = {"Authorization": f"Bearer {server.keys.alice}", "X-Memstrata-User": "bob"}
    r = anyio.run(http_session, server.url, headers, steps)
    assert r["tools"] >= TOOLS
    assert r["hits"].structured_content["hits"][0]["id"] == r["added"].structured_content["id"]
    context = r["context"].structured_content
    assert "Alice's favourite editor is Helix" in context["text"] and context["tokens"] <= 200
    assert "memories" in [p["name"] for p in context["parts"]]
    # The user-bound key decides; the header naming bob is ignored.
    assert "Alice's favourite editor is Helix" in contents(server.memory, "acme:alice")
    assert "Alice's favourite editor is Helix" not in contents(server.memory, "acme:bob")


def test_http_admin_key_needs_the_user_header(server: Server) -> None:
    async def steps(client: Client) -> Any:
        return await client.call_tool("add_memory", {"content": "Carol plays the cello"})

    without = anyio.run(http_session, server.url, {"Authorization": f"Bearer {server.keys.admin}"}, steps)
    assert without.is_error and "x-memstrata-user" in without.content[0].text
    headers = {"Authorization": f"Bearer {server.keys.admin}", "X-Memstrata-User": "carol"}
    with_header = anyio.run(http_session, server.url, headers, steps)
    assert not with_header.is_error
    assert "Carol plays the cello" in contents(server.memory, "acme:carol")


def test_http_entity_and_profile_lookup(server: Server) -> None:
    server.memory.upsert_entity("Sarah", scope="acme:alice", type="person", summary="Alice's manager")
    server.memory.set_fact("work", "employer", "Initech", scope="acme:alice")

    async def steps(client: Client) -> tuple[Any, Any]:
        entity = await client.call_tool("lookup_entity", {"name": "sarah"})
        profile = await client.call_tool("get_profile", {"category": "work"})
        return entity, profile

    entity, profile = anyio.run(http_session, server.url, {"Authorization": f"Bearer {server.keys.alice}"}, steps)
    assert entity.structured_content["summary"] == "Alice's manager"
    assert profile.structured_content == {"facts": [{"category": "work", "key": "employer", "value": "Initech"}]}


@pytest.mark.parametrize(
    "token",
    [pytest.param(None, id="no-key"), pytest.param("msk_wrong", id="wrong-key"), pytest.param("revoked")],
)
def test_http_without_a_valid_key_is_401(server: Server, token: str | None) -> None:
    key = server.keys.revoked if token == "revoked" else token
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"content": "intruder"}}}  # fmt: skip
    response = httpx.post(f"{server.url}/mcp", json=body, headers=headers)
    assert response.status_code == 401
    assert all("intruder" not in c for c in contents(server.memory, "acme:alice"))


def test_http_add_memory_reconciles_with_the_users_current_memories(server: Server) -> None:
    async def steps(client: Client) -> None:
        await client.call_tool("add_memory", {"content": "Dora works at Acme Corp"})
        await client.call_tool("add_memory", {"content": "Dora works at Globex"})
        await client.call_tool("add_memory", {"content": "Dora loves sailing"})

    headers = {"Authorization": f"Bearer {server.keys.admin}", "X-Memstrata-User": "dora"}
    anyio.run(http_session, server.url, headers, steps)
    assert sorted(contents(server.memory, "acme:dora")) == ["Dora loves sailing", "Dora works at Globex"]
    everything = server.memory.store.list_memories("acme:dora", MemoryFilter(include_superseded=True), limit=10)
    assert "Dora works at Acme Corp" in [r.content for r in everything]
