"""`memstrata keys create | list | revoke` and the start of `memstrata serve` (as `python -m memstrata`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memstrata.cli import server as server_commands
from memstrata.errors import InvalidInput, NotFound
from memstrata.server.auth import KeyRing
from memstrata.storage import open_store

from .conftest import open_memory


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store")
    parser.add_argument("--embedder")
    server_commands.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.handler(args))


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'keys.db'}"


def test_keys_create_list_revoke(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--store", store_url, "keys", "create", "--tenant", "acme", "--user", "alice", "--name", "ci"]) == 0
    out = capsys.readouterr()
    token = out.out.strip()
    assert token.startswith("msk_") and "shown only now" in out.err

    store = open_store(store_url)
    try:
        key = KeyRing(store).check(token)
        assert key is not None and (key.tenant, key.user, key.name) == ("acme", "alice", "ci")
    finally:
        store.close()

    assert run(["--store", store_url, "keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert key.id in listing and "user=alice" in listing and token not in listing

    assert run(["--store", store_url, "keys", "revoke", key.id]) == 0
    assert "revoked" in capsys.readouterr().out
    assert run(["--store", store_url, "keys", "list"]) == 0
    assert key.id not in capsys.readouterr().out
    assert run(["--store", store_url, "keys", "list", "--all"]) == 0
    assert "revoked" in capsys.readouterr().out
    store = open_store(store_url)
    try:
        assert KeyRing(store).check(token) is None
    finally:
        store.close()


def test_keys_create_with_a_role_and_a_grant(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--store", store_url, "keys", "create", "--tenant", "acme", "--role", "read-only", "--grant", "export"]
    assert run(argv) == 0
    out = capsys.readouterr()
    assert "created read-only key" in out.err and "(export, read)" in out.err
    store = open_store(store_url)
    try:
        key = KeyRing(store).check(out.out.strip())
        assert key is not None and key.user is None and key.role.value == "read-only"
        assert {p.value for p in key.permissions} == {"read", "export"}
    finally:
        store.close()
    assert run(["--store", store_url, "keys", "list"]) == 0
    assert "role=read-only+export  all-users" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        pytest.param(["keys", "create", "--tenant", "Not_Valid"], InvalidInput, id="bad-tenant"),
        pytest.param(["keys", "create", "--tenant", "acme", "--user", "has space"], InvalidInput, id="bad-user"),
        pytest.param(["keys", "revoke", "no-such-key"], NotFound, id="unknown-key"),
        pytest.param(["keys", "create", "--tenant", "acme", "--role", "user"], InvalidInput, id="user-role-no-user"),
    ],
)
def test_keys_errors(store_url: str, argv: list[str], error: type[Exception]) -> None:
    open_store(store_url).close()  # an existing store: `keys revoke` refuses a missing one before looking
    with pytest.raises(error):
        run(["--store", store_url, *argv])


def test_serve_bootstraps_an_admin_key_once_and_serves(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    open_memory(db).close()
    with socket_port() as port:
        argv = [
            sys.executable,
            "-m",
            "memstrata",
            "--store",
            f"sqlite:///{db}",
            "--embedder",
            "hashing:64",
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
    env = {**os.environ, "MEMSTRATA_WORKER": "off"}
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process)
            assert process.stderr is not None
            banner = "".join(process.stderr.readline() for _ in range(5))
            token = next(line.strip() for line in banner.splitlines() if line.strip().startswith("msk_"))
            assert httpx.get(f"{url}/v1/whoami").status_code == 401
            me = httpx.get(f"{url}/v1/whoami", headers={"Authorization": f"Bearer {token}"}).json()
            assert me["tenant"] == "default" and me["admin"] is True
        finally:
            process.terminate()
            process.wait(timeout=30)
    with open_memory(db) as memory:
        assert len(KeyRing(memory.store).list()) == 1  # a second start would not make another


class socket_port:
    """A free loopback port (released before the server binds it)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        return None


def wait_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read() if process.stderr else ''}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("server did not become healthy")
