"""The MCP client configurations the docs give work as written: each HTTP server entry of
examples/mcp_client_config.json and docs/server.md (its headers, the key put in for the placeholder)
reaches the user it names, with the admin key `memstrata serve` prints on its first start as with a
key bound to that user; each stdio entry names its user on the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from .conftest import Server
from .test_mcp import contents, http_session

ROOT = Path(__file__).resolve().parents[2]


def configurations() -> list[tuple[str, dict[str, Any]]]:
    found = [("examples", json.loads((ROOT / "examples" / "mcp_client_config.json").read_text()))]
    blocks = re.findall(r"^```json\n(.*?)^```", (ROOT / "docs" / "server.md").read_text(), re.DOTALL | re.MULTILINE)
    found += [(f"server.md-{n}", json.loads(b)) for n, b in enumerate(blocks, start=1) if "mcpServers" in b]
    return found


def entries(kind: str) -> list[Any]:
    return [
        pytest.param(entry, id=f"{where}-{name}")
        for where, config in configurations()
        for name, entry in config["mcpServers"].items()
        if (entry.get("type") == "http") == (kind == "http")
    ]


def with_key(headers: dict[str, str], token: str) -> dict[str, str]:
    return {k: v.replace("${MEMSTRATA_API_KEY}", token).replace("msk_...", token) for k, v in headers.items()}


def test_the_docs_have_both_kinds_of_entry() -> None:
    assert len(entries("http")) >= 2 and len(entries("stdio")) >= 2


@pytest.mark.parametrize("entry", entries("http"))
def test_http_entries_reach_the_user_they_name(entry: dict[str, Any], server: Server) -> None:
    user = entry["headers"].get("X-Memstrata-User")
    assert user, f"{entry}: an admin key needs X-Memstrata-User"
    text = f"{user} keeps the MCP config next to the code ({entry['url']})"

    async def steps(client: Client) -> Any:
        return await client.call_tool("add_memory", {"content": text})

    for token in (server.keys.admin, server.keys.alice):  # the bootstrap admin key, a user-bound key
        result = anyio.run(http_session, server.url, with_key(entry["headers"], token), steps)
        assert not result.is_error, result.content
    assert entry["url"] == "http://127.0.0.1:8420/mcp"  # `memstrata serve`'s default address
    assert text in contents(server.memory, f"acme:{user}")


@pytest.mark.parametrize("entry", entries("stdio"))
def test_stdio_entries_name_their_user(entry: dict[str, Any]) -> None:
    args = entry["args"]
    assert entry["command"] == "memstrata" and args[0] == "mcp" and args[args.index("--user") + 1], entry
