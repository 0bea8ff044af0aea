"""A real memstrata server (uvicorn on 127.0.0.1, random port) over a fresh SQLite store per test module."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.server.app import UVICORN_OPTIONS, create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig

from ..conftest import service_missing

TENANT = "acme"


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run `app` with uvicorn in a thread on a free loopback port; yield its base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False, **UVICORN_OPTIONS
    )  # as `memstrata serve` runs it
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def open_memory(path: Path) -> Memory:
    return Memory(store=f"sqlite:///{path}", embedder=HashingEmbedder(64))


@dataclass
class Keys:
    admin: str
    alice: str
    bob: str
    revoked: str
    other_tenant_admin: str
    revoked_id: str


@dataclass
class Server:
    url: str
    memory: Memory
    keys: Keys

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def make_keys(memory: Memory) -> Keys:
    ring = KeyRing(memory.store)
    _, admin = ring.create(TENANT, name="admin")
    _, alice = ring.create(TENANT, user="alice", name="alice")
    _, bob = ring.create(TENANT, user="bob", name="bob")
    revoked_key, revoked = ring.create(TENANT, user="alice", name="old")
    ring.revoke(revoked_key.id)
    _, other = ring.create("globex", name="other tenant")
    return Keys(admin, alice, bob, revoked, other, revoked_key.id)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    memory = open_memory(tmp_path_factory.mktemp("server") / "memstrata.db")
    keys = make_keys(memory)
    # The fuzzer and the auth tests send hundreds of requests, many with no or a wrong key, from one
    # address in seconds: the default rate limits (tested in test_ratelimit.py) would answer 429.
    config = ServerConfig(auth=True, rate_limit="100000/minute", auth_failure_limit="100000/minute")
    app = create_app(memory=memory, config=config)
    try:
        with serve(app) as url:
            yield Server(url, memory, keys)
    finally:
        memory.close()


@pytest.fixture(scope="module")
def insecure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    memory = open_memory(tmp_path_factory.mktemp("insecure") / "memstrata.db")
    app = create_app(memory=memory, config=ServerConfig(auth=False))
    try:
        with serve(app) as url:
            yield Server(url, memory, make_keys(memory))
    finally:
        memory.close()


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's headless Chromium driven by playwright (`scripts/browser.sh` installs it)."""
    if not CHROMIUM.exists():
        service_missing("headless Chromium missing: run scripts/browser.sh")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()
