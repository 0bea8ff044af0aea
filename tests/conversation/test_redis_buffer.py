"""Redis specifics: key layout, TTL, restarts of a real redis-server, and a Redis that is down."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.buffer import Turn, open_buffer
from memstrata.buffer.redis import RedisBuffer, redact_url
from memstrata.errors import BufferUnavailable, InvalidInput
from memstrata.models import Scope
from tests.conftest import service_missing

from .conftest import redis_client, redis_url

pytestmark = pytest.mark.redis

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
S1 = Scope("alice", session_id="s1")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_key_layout_ttl_and_json_entries(redis_prefix: str) -> None:
    buffer = open_buffer(f"{redis_url()}?prefix={redis_prefix}&ttl=120")
    assert isinstance(buffer, RedisBuffer)
    buffer.append(S1, [Turn("user", "hello", AT, id="t1", speaker="Alice")], max_turns=10)
    client = redis_client()
    key = f"{redis_prefix}user:{{alice}}:session:s1"
    assert client.type(key) == "list"
    assert client.lrange(key, 0, -1) == [
        '{"id":"t1","role":"user","content":"hello","at":"2026-03-02T09:00:00+00:00","speaker":"Alice"}'
    ]
    assert 0 < client.pttl(key) <= 120_000
    client.close()
    buffer.close()


def test_keys_of_one_user_share_a_cluster_hash_slot(redis_prefix: str) -> None:
    redis = pytest.importorskip("redis")
    buffer = RedisBuffer(redis_url(), prefix=redis_prefix)
    slot = redis.crc.key_slot
    keys = [buffer.key(Scope("alice", session_id=s)) for s in ("s1", "s2", "a:b")]
    assert len({slot(k.encode()) for k in keys}) == 1
    buffer.close()


def test_prefix_with_braces_is_refused() -> None:
    with pytest.raises(InvalidInput, match="hash tag"):
        RedisBuffer(redis_url(), prefix="{app}:")


def test_redis_down_is_a_clear_error_without_the_password() -> None:
    url = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"
    buffer = open_buffer(url)
    started = time.perf_counter()
    with pytest.raises(BufferUnavailable) as caught:
        buffer.append(S1, [Turn("user", "hello", AT, id="t1")], max_turns=10)
    assert time.perf_counter() - started < 5
    message = str(caught.value)
    assert "s3cret-pw" not in message and "127.0.0.1" in message and "unavailable" in message
    for call in (
        lambda: buffer.window(S1),
        lambda: buffer.clear_user("alice"),
        lambda: buffer.trim_through(S1, "x"),
    ):
        with pytest.raises(BufferUnavailable):
            call()
    assert redact_url(url) == url.replace("s3cret-pw", "***")
    buffer.close()


class OwnRedis:
    """A redis-server of our own, with append-only persistence, that a test may stop and start."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.data_dir = data_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.data_dir),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(process)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()  # SIGTERM: redis fsyncs the append-only file and exits
                process.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        service_missing("redis-server binary not found (needed to restart a Redis server in a test)")
    server = OwnRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_session_survives_a_redis_server_restart(own_redis: OwnRedis) -> None:
    buffer = RedisBuffer(own_redis.url, ttl_seconds=3600)
    buffer.append(S1, [Turn("user", f"m{i}", AT, id=f"t{i}") for i in range(3)], max_turns=10)
    own_redis.stop()
    with pytest.raises(BufferUnavailable):
        buffer.window(S1)
    own_redis.start()
    try:
        assert [t.id for t in buffer.window(S1) or []] == ["t0", "t1", "t2"]
    finally:
        buffer.close()
