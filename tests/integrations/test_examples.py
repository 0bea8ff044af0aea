"""The examples run offline: the LangGraph agent with a scripted chat model, the OpenAI-compatible loop
against the real local protocol server of tests/llm/servers.py, the MCP client config against
`memstrata mcp` over stdio."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.llm.servers import API_KEY, openai_server

from .test_seed_scenario import EXAMPLES, load_example


def test_langgraph_agent_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = load_example("langgraph_agent").main(str(tmp_path / "agent.db"))
    assert results[0]["memories"] == []
    assert results[2]["memories"][0] == "The user prefers short answers."
    assert "The user's manager is Sarah." in results[2]["memories"]
    assert "session 3" in capsys.readouterr().out


def test_openai_agent_loop_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = load_example("openai_agent_loop")
    store = f"sqlite:///{tmp_path / 'loop.db'}"
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("MEMSTRATA_EMBEDDER", "hashing")
    sessions = {
        "s1": "I prefer short answers\n/end\n",
        "s2": "My manager is Sarah\n",
        "s3": "How should you answer me?\n",
    }
    with openai_server(api_key=API_KEY) as server:
        server.script("Noted.", "Good to know.", "Briefly: like this.")
        for session, typed in sessions.items():
            monkeypatch.setattr("sys.stdin", io.StringIO(typed))
            argv = ["--user", "alice", "--session", session, "--store", store, "--base-url", server.base_url]
            assert example.main([*argv, "--model", "fake-model"]) == 0
        system = server.requests[-1].json["messages"][0]
    assert system["role"] == "system"
    assert "short answers" in system["content"]
    assert [r.json["messages"][-1]["content"] for r in server.requests] == [
        "I prefer short answers",
        "My manager is Sarah",
        "How should you answer me?",
    ]


def test_mcp_client_config_starts_a_working_stdio_server(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the stdio server needs the mcp extra")
    config = json.loads((EXAMPLES / "mcp_client_config.json").read_text())
    stdio = config["mcpServers"]["memstrata"]
    assert stdio["command"] == "memstrata"
    assert config["mcpServers"]["memstrata-http"]["url"] == "http://127.0.0.1:8420/mcp"  # `memstrata serve`'s port
    # The store path does not depend on the directory the client starts the server in: `~` is the home.
    env = {**os.environ, **stdio["env"], "MEMSTRATA_EMBEDDER": "hashing", "HOME": str(tmp_path / "home")}
    with StdioClient([sys.executable, "-m", "memstrata", *stdio["args"]], cwd=tmp_path, env=env) as client:
        hello = client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        assert hello["serverInfo"]["name"] == "memstrata"
        client.notify("notifications/initialized")
        added = client.request(
            "tools/call", {"name": "add_memory", "arguments": {"content": "Alice prefers short answers"}}
        )
        assert not added.get("isError"), added
        found = client.request("tools/call", {"name": "search_memories", "arguments": {"query": "short answers"}})
        assert "Alice prefers short answers" in json.dumps(found)
    assert (tmp_path / "home" / ".memstrata" / "memories.db").exists()
    assert not (tmp_path / "~").exists()


class StdioClient:
    """A minimal MCP client over stdio: newline-delimited JSON-RPC, one request at a time."""

    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + 30
        while True:
            try:
                reply = json.loads(self.lines.get(timeout=0.2))
            except queue.Empty:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"no reply to {method}; stderr: {self._stderr()}") from None
                continue
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                return dict(reply["result"])

    def _stderr(self) -> str:
        self.process.kill()
        assert self.process.stderr is not None
        return self.process.stderr.read()[-2000:]

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        finally:
            self.process.kill()
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
