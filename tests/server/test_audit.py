"""The audit log over real HTTP: exports, imports, erasures and tenant-wide reads are logged with the key id,
never any memory text; only tenant admins read it (REST and CLI); an erased user leaves only the receipt."""

from __future__ import annotations

import json
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

from memstrata.cli import main as cli_main
from memstrata.server.app import create_app
from memstrata.server.auth import ApiKey, KeyRing
from memstrata.server.config import ServerConfig

from .conftest import TENANT, open_memory, serve

MARKER = "ZEBRA-MARKER-7731"


@dataclass
class AuditServer:
    url: str
    path: Path
    admin: ApiKey
    admin_token: str
    alice_token: str
    reader: ApiKey
    reader_token: str

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def log(self) -> list[dict[str, Any]]:
        with self.client(self.admin_token) as admin:
            page = admin.get("/v1/audit", params={"limit": 500})
        assert page.status_code == 200, page.text
        items: list[dict[str, Any]] = page.json()["items"]
        return items


@pytest.fixture(scope="module")
def audit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuditServer]:
    path = tmp_path_factory.mktemp("audit") / "memstrata.db"
    memory = open_memory(path)
    ring = KeyRing(memory.store)
    admin, admin_token = ring.create(TENANT, name="ops")
    _, alice_token = ring.create(TENANT, user="alice")
    reader, reader_token = ring.create(TENANT, role="read-only", name="dashboard")
    app = create_app(memory=memory, config=ServerConfig(auth=True))
    try:
        with serve(app) as url:
            yield AuditServer(url, path, admin, admin_token, alice_token, reader, reader_token)
    finally:
        memory.close()


def test_exports_imports_and_tenant_reads_are_logged_without_text(audit_server: AuditServer) -> None:
    with audit_server.client(audit_server.alice_token) as alice:
        assert alice.post("/v1/users/alice/memories", json={"content": f"Alice's code is {MARKER}"}).status_code == 201
        assert alice.get("/v1/users/alice/memories").status_code == 200  # own data: not logged
    with audit_server.client(audit_server.admin_token) as admin:
        document = admin.get("/v1/users/alice/export").json()
        assert admin.post("/v1/users/dave/import", content=json.dumps(document)).status_code == 200
    with audit_server.client(audit_server.reader_token) as reader:
        assert reader.post("/v1/users/alice/search", json={"query": "code"}).status_code == 200

    log = audit_server.log()
    assert MARKER not in json.dumps(log)
    seen = {(e["action"], e["user"], e["key_id"], e["role"]) for e in log}
    assert ("export", "alice", audit_server.admin.id, "admin") in seen
    assert ("import", "dave", audit_server.admin.id, "admin") in seen
    assert ("tenant_read", "alice", audit_server.reader.id, "read-only") in seen
    assert not any(e["action"] == "tenant_read" and e["role"] == "user" for e in log)
    export = next(e for e in log if e["action"] == "export")
    assert export["operation"] == "GET /v1/users/{user_id}/export" and export["at"]
    assert [e["at"] for e in log] == sorted((e["at"] for e in log), reverse=True)  # newest first


def test_mcp_reads_by_a_tenant_wide_key_are_logged(audit_server: AuditServer) -> None:
    async def run() -> Any:
        headers = {"Authorization": f"Bearer {audit_server.admin_token}", "X-Memstrata-User": "erin"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{audit_server.url}/mcp", http_client=http)) as client,
        ):
            return await client.call_tool("search_memories", {"query": "anything"})

    assert not anyio.run(run).is_error
    assert any(
        e["action"] == "tenant_read" and e["user"] == "erin" and e["operation"].startswith("MCP")
        for e in audit_server.log()
    )


def test_only_tenant_admins_read_the_log(audit_server: AuditServer) -> None:
    for token in (audit_server.alice_token, audit_server.reader_token):
        with audit_server.client(token) as client:
            refused = client.get("/v1/audit")
        assert refused.status_code == 403 and "'admin' permission" in refused.json()["detail"]


def test_an_erased_user_leaves_only_the_receipt(audit_server: AuditServer) -> None:
    with audit_server.client(audit_server.admin_token) as admin:
        assert admin.post("/v1/users/frank/memories", json={"content": f"Frank {MARKER}"}).status_code == 201
        assert admin.get("/v1/users/frank/memories").status_code == 200
        assert admin.get("/v1/users/frank/export").status_code == 200
    assert sum(e["user"] == "frank" for e in audit_server.log()) == 2
    with audit_server.client(audit_server.alice_token) as alice:
        receipt = alice.delete("/v1/users/alice").json()
    with audit_server.client(audit_server.admin_token) as admin:
        frank_receipt = admin.delete("/v1/users/frank").json()
    log = audit_server.log()
    assert not any(e["user"] in {"alice", "frank"} for e in log)
    erasures = [e for e in log if e["action"] == "erase"]
    assert {e["receipt"] for e in erasures} == {receipt["request_id"], frank_receipt["request_id"]}
    assert all(e["user"] is None for e in erasures)
    assert "frank" not in json.dumps(log) and MARKER not in json.dumps(log)


def test_cli_prints_the_log(audit_server: AuditServer, capsys: pytest.CaptureFixture[str]) -> None:
    with audit_server.client(audit_server.admin_token) as admin:
        assert admin.get("/v1/users/gina/export").status_code == 200
    assert cli_main(["--store", f"sqlite:///{audit_server.path}", "audit", "--tenant", TENANT, "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert "export" in out and f"key={audit_server.admin.id}" in out and "user=gina" in out


def test_cli_erasure_leaves_only_the_receipt(audit_server: AuditServer, capsys: pytest.CaptureFixture[str]) -> None:
    with audit_server.client(audit_server.admin_token) as admin:
        assert admin.post("/v1/users/hank/memories", json={"content": f"Hank {MARKER}"}).status_code == 201
        assert admin.get("/v1/users/hank/export").status_code == 200
    assert any(e["user"] == "hank" for e in audit_server.log())
    store = f"sqlite:///{audit_server.path}"
    args = ["--store", store, "--embedder", "hashing:64", "erase", "--user", f"{TENANT}:hank", "--yes", "--json"]
    assert cli_main(args) == 0
    receipt = json.loads(capsys.readouterr().out)
    log = audit_server.log()
    assert not any(e["user"] == "hank" for e in log) and "hank" not in json.dumps(log)
    [entry] = [e for e in log if e["receipt"] == receipt["request_id"]]
    assert entry["action"] == "erase" and entry["user"] is None and entry["role"] == "operator"
    assert entry["operation"] == "cli: memstrata erase" and entry["key_id"] is None


def test_one_rest_erasure_leaves_one_entry(audit_server: AuditServer) -> None:
    with audit_server.client(audit_server.admin_token) as admin:
        assert admin.get("/v1/users/iris/export").status_code == 200
        receipt = admin.delete("/v1/users/iris").json()
    [entry] = [e for e in audit_server.log() if e["receipt"] == receipt["request_id"]]
    assert entry["key_id"] == audit_server.admin.id and entry["operation"] == "DELETE /v1/users/{user_id}"
