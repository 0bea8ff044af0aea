"""The MCP server with the official SDK's client: stdio (`memstrata mcp --user ...` in a subprocess) and
streamable HTTP (`/mcp` of the running server, scoped by the bearer key)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memstrata import namespaces
from memstrata.memory import Memory
from memstrata.storage.base import MemoryFilter

from .conftest import Server, open_memory

TOOLS = {
    "learn",
    "add_memory",
    "search_memories",
    "get_memory",
    "list_memories",
    "update_memory",
    "supersede_memory",
    "forget_memory",
    "memory_history",
    "get_context",
    "get_profile",
    "set_profile_fact",
    "delete_profile_fact",
    "list_entities",
    "lookup_entity",
    "find_procedures",
    "add_procedure",
    "add_session_messages",
    "get_session",
    "end_session",
    "get_user_context",
    "export_memories",
}
READ_ONLY = {
    "search_memories",
    "get_memory",
    "list_memories",
    "memory_history",
    "get_context",
    "get_profile",
    "list_entities",
    "lookup_entity",
    "find_procedures",
    "get_session",
    "get_user_context",
    "export_memories",
}
DESTRUCTIVE = {"update_memory", "forget_memory", "set_profile_fact", "delete_profile_fact"}


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
        ],
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
    assert r["found"].structured_content["hits"][0]["memory"]["content"] == "Alice is allergic to peanuts"
    assert set(r["found"].structured_content["hits"][0]["scores"]) >= {"semantic", "keyword"}
    assert r["forgotten"].structured_content == {"id": r["added"].structured_content["id"], "forgotten": True}
    assert all("peanuts" not in h["memory"]["content"] for h in r["again"].structured_content["hits"])
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
    assert r["hits"].structured_content["hits"][0]["memory"]["id"] == r["added"].structured_content["id"]
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
    [fact] = profile.structured_content["facts"]
    assert (fact["category"], fact["key"], fact["value"]) == ("work", "employer", "Initech")


@pytest.mark.parametrize(
    "token",
    [pytest.param(None, id="no-key"), pytest.param("msk_wrong", id="wrong-key"), pytest.param("revoked")],
)
def test_http_without_a_valid_key_is_401(server: Server, token: str | None) -> None:
    key = server.keys.revoked if token == "revoked" else token
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add_memory", "arguments": {"content": "intruder"}},
    }
    response = httpx.post(f"{server.url}/mcp", json=body, headers=headers)
    assert response.status_code == 401
    assert all("intruder" not in c for c in contents(server.memory, "acme:alice"))


def test_http_add_memory_stores_verbatim_and_learn_reconciles(server: Server) -> None:
    async def steps(client: Client) -> Any:
        await client.call_tool("add_memory", {"content": "Dora works at Acme Corp"})
        await client.call_tool("add_memory", {"content": "Dora works at Initech"})
        await client.call_tool("add_memory", {"content": "Dora loves sailing"})
        added = sorted(contents(server.memory, "acme:dora"))
        learned = await client.call_tool("learn", {"messages": [{"content": "I work at Globex now"}]})
        return added, learned

    headers = {"Authorization": f"Bearer {server.keys.admin}", "X-Memstrata-User": "dora"}
    added, learned = anyio.run(http_session, server.url, headers, steps)
    assert added == ["Dora loves sailing", "Dora works at Acme Corp", "Dora works at Initech"]
    assert [op["event"] for op in learned.structured_content["operations"]] == ["supersede"]
    assert sorted(contents(server.memory, "acme:dora")) == ["Dora loves sailing", "The user works at Globex."]
    everything = server.memory.store.list_memories("acme:dora", MemoryFilter(include_superseded=True), limit=10)
    assert "Dora works at Acme Corp" in [r.content for r in everything]


# -- the tool list: descriptions, parameter schemas, annotations ----------------
def test_every_tool_is_described_for_a_model(server: Server) -> None:
    async def steps(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {
        t.name: t for t in anyio.run(http_session, server.url, {"Authorization": f"Bearer {server.keys.alice}"}, steps)
    }
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 40, name
        assert tool.output_schema is not None, name  # structured output
        for param, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{param} has no description"
        hints = tool.annotations
        assert hints is not None and hints.title and hints.open_world_hint is False
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert hints.destructive_hint is (name in DESTRUCTIVE), name
    search = tools["search_memories"].input_schema
    strategies = search["$defs"]["Strategy"]["enum"]
    assert set(strategies) >= {"hybrid", "semantic", "keyword", "hybrid_rrf", "time_weighted"}
    assert search["$defs"]["MemoryKind"]["enum"][0] == "fact"
    assert (search["properties"]["k"]["minimum"], search["properties"]["k"]["maximum"]) == (1, 50)
    assert tools["forget_memory"].annotations.idempotent_hint is True


def test_out_of_bounds_and_unknown_enum_values_are_tool_errors(server: Server) -> None:
    async def steps(client: Client) -> list[Any]:
        return [
            await client.call_tool("search_memories", {"query": "x", "k": 500}),
            await client.call_tool("search_memories", {"query": "x", "strategy": "magic"}),
            await client.call_tool("add_memory", {"content": "x", "kind": "rumour"}),
            await client.call_tool("get_memory", {"memory_id": "no-such-id"}),
        ]

    results = anyio.run(http_session, server.url, {"Authorization": f"Bearer {server.keys.alice}"}, steps)
    assert all(r.is_error for r in results)
    assert "NotFound" in results[3].content[0].text


def test_http_full_memory_lifecycle(server: Server) -> None:
    """learn -> list -> get -> update -> supersede -> history -> search as_of -> forget, as one agent would."""

    async def steps(client: Client) -> dict[str, Any]:
        learned = await client.call_tool(
            "learn", {"messages": [{"role": "user", "content": "I moved to Lisbon last month. I love fado."}]}
        )
        listed = await client.call_tool("list_memories", {"limit": 1})
        first_id = learned.structured_content["operations"][0]["memory"]["id"]
        got = await client.call_tool("get_memory", {"memory_id": first_id})
        added = await client.call_tool(
            "add_memory", {"content": "Dana works at Initech", "kind": "fact", "metadata": {"source": "chat"}}
        )
        added_id = added.structured_content["id"]
        updated = await client.call_tool("update_memory", {"memory_id": added_id, "importance": 0.9})
        change = {"memory_id": added_id, "content": "Dana works at Globex", "reason": "new job"}
        replaced = await client.call_tool("supersede_memory", change)
        history = await client.call_tool("memory_history", {"memory_id": added_id})
        current = await client.call_tool("search_memories", {"query": "where does Dana work", "k": 5})
        with_old = await client.call_tool(
            "search_memories", {"query": "where does Dana work", "k": 5, "filters": {"include_superseded": True}}
        )
        by_meta_filter = {"metadata": {"source": "chat"}, "include_superseded": True}
        by_meta = await client.call_tool("list_memories", {"filters": by_meta_filter})
        forgotten = await client.call_tool("forget_memory", {"memory_id": replaced.structured_content["id"]})
        return locals()

    headers = {"Authorization": f"Bearer {server.keys.alice}", "X-Memstrata-Agent": "assistant-1"}
    r = anyio.run(http_session, server.url, headers, steps)
    ops = r["learned"].structured_content["operations"]
    assert any("Lisbon" in op["memory"]["content"] for op in ops) and all(op["event"] == "add" for op in ops)
    assert r["got"].structured_content["id"] == ops[0]["memory"]["id"]
    page = r["listed"].structured_content
    assert len(page["memories"]) == 1 and page["next_offset"] == 1
    assert r["added"].structured_content["agent_id"] == "assistant-1"
    assert r["updated"].structured_content["importance"] == 0.9
    assert [e["event"] for e in r["history"].structured_content["events"]][-1] == "supersede"
    contents_now = [h["memory"]["content"] for h in r["current"].structured_content["hits"]]
    assert "Dana works at Globex" in contents_now and "Dana works at Initech" not in contents_now
    marked = {h["memory"]["content"]: h["superseded"] for h in r["with_old"].structured_content["hits"]}
    assert marked["Dana works at Initech"] is True and marked["Dana works at Globex"] is False
    by_meta = [m["content"] for m in r["by_meta"].structured_content["memories"]]
    assert sorted(by_meta) == ["Dana works at Globex", "Dana works at Initech"]  # the new one keeps the metadata
    assert r["forgotten"].structured_content["forgotten"] is True
    assert "Dana works at Globex" not in contents(server.memory, "acme:alice")


def test_http_profile_entities_procedures_sessions_and_export(server: Server) -> None:
    server.memory.upsert_entity("Priya", scope="acme:alice", type="person", summary="Alice's sister")

    async def steps(client: Client) -> dict[str, Any]:
        fact = await client.call_tool("set_profile_fact", {"category": "food", "key": "diet", "value": "vegetarian"})
        facts = await client.call_tool("get_profile", {"category": "food"})
        entities = await client.call_tool("list_entities", {})
        proc = await client.call_tool(
            "add_procedure", {"task": "write an email", "instruction": "Sign emails with 'Cheers, Alice'"}
        )
        procs = await client.call_tool("find_procedures", {"task": "draft an email to a colleague"})
        bad_proc = await client.call_tool("add_procedure", {"task": "write an email"})
        turns = await client.call_tool(
            "add_session_messages",
            {
                "session_id": "s-1",
                "messages": [
                    {"role": "user", "content": "Let's plan the Porto trip"},
                    {"role": "assistant", "content": "Sure, which dates?"},
                ],
            },
        )
        session = await client.call_tool("get_session", {"session_id": "s-1"})
        ended = await client.call_tool("end_session", {"session_id": "s-1"})
        user_context = await client.call_tool("get_user_context", {})
        context = await client.call_tool("get_context", {"query": "email", "session_id": "s-1", "max_tokens": 400})
        deleted = await client.call_tool("delete_profile_fact", {"category": "food", "key": "diet"})
        export = await client.call_tool("export_memories", {})
        templates = (await client.list_resource_templates()).resource_templates
        resource = await client.read_resource("memstrata://user/facts")
        context_resource = await client.read_resource("memstrata://user/context")
        return locals()

    r = anyio.run(http_session, server.url, {"Authorization": f"Bearer {server.keys.alice}"}, steps)
    assert r["fact"].structured_content["value"] == "vegetarian"
    assert [f["key"] for f in r["facts"].structured_content["facts"]] == ["diet"]
    assert "Priya" in [e["name"] for e in r["entities"].structured_content["entities"]]
    assert "Cheers, Alice" in r["procs"].structured_content["procedures"][0]["text"]
    assert r["bad_proc"].is_error and "instruction" in r["bad_proc"].content[0].text
    assert [t["role"] for t in r["turns"].structured_content["turns"]] == ["user", "assistant"]
    assert [t["content"] for t in r["session"].structured_content["turns"]][0] == "Let's plan the Porto trip"
    assert r["ended"].structured_content["user_context"]["user_id"] == "alice"
    assert r["user_context"].structured_content["last_session"] is not None
    context = r["context"].structured_content
    assert "Cheers, Alice" in context["text"] and context["tokens"] <= 400
    assert r["deleted"].structured_content["deleted"] is True
    export = r["export"].structured_content
    assert export["format"] == "memstrata-export" and "Priya" in json.dumps(export["items"])
    assert [t.uri_template for t in r["templates"]] == ["memstrata://user/{section}"]
    assert r["resource"].contents[0].text.strip().startswith("{")
    assert "Last talked about: Porto" in r["context_resource"].contents[0].text  # the ended session's topics


def test_http_learn_takes_the_users_known_name_and_search_resolves_it(server: Server) -> None:
    async def steps(client: Client) -> Any:
        await client.call_tool(
            "learn",
            {
                "messages": [{"content": "I live in Porto."}, {"content": "My mother lives in Montreal."}],
                "known_name": "Maya",
            },
        )
        return await client.call_tool("search_memories", {"query": "where does Maya live?", "k": 3})

    headers = {"Authorization": f"Bearer {server.keys.admin}", "X-Memstrata-User": "maya"}
    found = anyio.run(http_session, server.url, headers, steps)
    name = server.memory.store.get_item("acme:maya", namespaces.PROFILE, "identity:name")
    assert name is not None and name.value["value"] == "Maya"
    hits = found.structured_content["hits"]
    assert "Porto" in hits[0]["memory"]["content"], hits
