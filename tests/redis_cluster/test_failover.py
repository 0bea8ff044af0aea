"""The buffer on Redis Cluster: a user's keys share one slot, and a master killed with SIGKILL fails over
while a session goes on, losing no acknowledged turn.

"Acknowledged" means `RedisBuffer.append` returned: with `wait_replicas=1` that happens only after
`WAIT 1` confirmed that the master's one replica holds the write. An append that raised
`BufferUnavailable` was not acknowledged (it may or may not have been applied) and is retried.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata.buffer import Turn, open_buffer
from memstrata.buffer.redis import RedisBuffer
from memstrata.errors import BufferUnavailable
from memstrata.models import Scope
from tests.redis_cluster.conftest import cluster_client, cluster_url

pytestmark = pytest.mark.redis_cluster

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "redis_cluster.sh"
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def turn(n: int) -> Turn:
    return Turn("user" if n % 2 else "assistant", f"message {n}", AT, id=f"t{n}")


def test_a_users_keys_share_one_slot_and_clear_user_removes_them(cluster_prefix: str) -> None:
    buffer = RedisBuffer(cluster_url(), prefix=cluster_prefix)
    client = cluster_client()
    try:
        for session in ("a", "b", "c"):
            buffer.append(Scope("alice", session_id=session), [turn(1)], max_turns=10)
        with buffer.fold_lock(Scope("alice", session_id="a")) as acquired:
            assert acquired
            keys = [buffer.key(Scope("alice", session_id=s)) for s in "abc"]
            assert len({client.keyslot(k) for k in keys}) == 1
        buffer.append(Scope("bob", session_id="a"), [turn(1)], max_turns=10)
        assert buffer.clear_user("alice") == 3
        assert buffer.window(Scope("alice", session_id="a")) is None
        assert buffer.window(Scope("bob", session_id="a")) is not None
    finally:
        buffer.close()
        client.close()


def test_open_buffer_reads_cluster_urls_and_wait_options(cluster_prefix: str) -> None:
    buffer = open_buffer(f"{cluster_url()}?prefix={cluster_prefix}&wait_replicas=1&wait_timeout_ms=500")
    assert isinstance(buffer, RedisBuffer) and (buffer.wait_replicas, buffer.wait_timeout_ms) == (1, 500)
    buffer.append(Scope("alice", session_id="s"), [turn(1)], max_turns=5)
    assert [t.id for t in buffer.window(Scope("alice", session_id="s")) or []] == ["t1"]
    buffer.close()


def test_more_replicas_than_exist_is_never_acknowledged(cluster_prefix: str) -> None:
    buffer = RedisBuffer(cluster_url(), prefix=cluster_prefix, wait_replicas=2, wait_timeout_ms=100)
    try:
        with pytest.raises(BufferUnavailable, match="only 1 of 2 replica"):
            buffer.append(Scope("alice", session_id="s"), [turn(1)], max_turns=5)
    finally:
        buffer.close()


def test_retrying_an_unacknowledged_append_that_was_applied_keeps_one_copy(cluster_prefix: str) -> None:
    """The failover case without the failover: an append the master applied but the replicas did not
    acknowledge in time raises, yet its turn is in the list; the caller's retry must not add it again."""
    scope = Scope("dave", session_id="s1")
    strict = RedisBuffer(cluster_url(), prefix=cluster_prefix, wait_replicas=2, wait_timeout_ms=100)
    buffer = RedisBuffer(cluster_url(), prefix=cluster_prefix, wait_replicas=1)
    try:
        buffer.append(scope, [turn(1)], max_turns=10)
        with pytest.raises(BufferUnavailable, match="not acknowledged"):
            strict.append(scope, [turn(2)], max_turns=10)
        assert [t.id for t in buffer.window(scope) or []] == ["t1", "t2"]  # applied all the same
        retried = buffer.append(scope, [turn(2)], max_turns=10)
        assert [t.id for t in retried.turns] == ["t1", "t2"]
    finally:
        strict.close()
        buffer.close()


def test_killing_the_master_loses_no_acknowledged_turn(cluster_prefix: str) -> None:
    scope = Scope("carol", session_id="s1")
    buffer = RedisBuffer(cluster_url(), prefix=cluster_prefix, wait_replicas=1, wait_timeout_ms=500, timeout=0.5)
    client = cluster_client()
    master = client.get_node_from_key(buffer.key(scope))
    try:
        acknowledged = [append_acknowledged(buffer, scope, n) for n in range(1, 21)]
        pid = int(client.get_redis_connection(master).info("server")["process_id"])
        os.kill(pid, signal.SIGKILL)
        n, restarted, deadline = 21, False, time.monotonic() + 60
        while len(acknowledged) < 40:
            assert time.monotonic() < deadline, f"the session did not continue: {len(acknowledged)} turns"
            try:
                buffer.append(scope, [turn(n)], max_turns=1000)
            except BufferUnavailable:  # not acknowledged: failover in progress, or no replica yet
                if not restarted and replaced(client, master.port):
                    # Only now: a master restarted empty before its replica took over would wipe it.
                    subprocess.run(["bash", str(SCRIPT), "start", str(master.port)], check=True)
                    restarted = True
                time.sleep(0.2)
                continue
            acknowledged.append(f"t{n}")
            n += 1
        assert restarted, "the killed master's slots never failed over"
        fresh = RedisBuffer(cluster_url(), prefix=cluster_prefix)
        window = [t.id for t in fresh.window(scope) or []]
        fresh.close()
        assert [i for i in window if i in set(acknowledged)] == acknowledged  # every one, in order
    finally:
        buffer.close()
        wait_replaced(client, master.port)  # never restart an empty master before its replica took over
        client.close()
        subprocess.run(["bash", str(SCRIPT), "up"], check=True)  # all six nodes back for later tests


def append_acknowledged(buffer: RedisBuffer, scope: Scope, n: int) -> str:
    buffer.append(scope, [turn(n)], max_turns=1000)
    return f"t{n}"


def replaced(client: Any, port: int) -> bool:
    """Whether the node on `port` lost its slots to another node (as a live node sees it)."""
    for node in client.get_nodes():
        if node.port == port:
            continue
        try:
            nodes = client.get_redis_connection(node).execute_command("CLUSTER NODES")
        except Exception:  # noqa: BLE001 - any live node will do
            continue
        entry = nodes.get(f"127.0.0.1:{port}")
        if entry is not None:
            return "slave" in entry["flags"] or ("fail" in entry["flags"] and not entry["slots"])
    return False


def wait_replaced(client: Any, port: int) -> None:
    deadline = time.monotonic() + 30
    while not replaced(client, port) and time.monotonic() < deadline:
        time.sleep(0.2)


def test_an_unreachable_cluster_is_buffer_unavailable() -> None:
    with pytest.raises(BufferUnavailable, match="Redis Cluster at redis\\+cluster://127.0.0.1:7999 is unavailable"):
        RedisBuffer("redis+cluster://127.0.0.1:7999", timeout=0.5)


def test_too_few_replicas_is_a_logged_counted_degraded_state(
    cluster_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each master has one replica: asking for two makes every write unacknowledged. The refusal comes
    after the configured timeout, the buffer reports the state and counts the refusals, and logs the
    state once, not once per write; acknowledged writes end it."""
    scope = Scope("alice", session_id="degraded")
    strict = RedisBuffer(cluster_url(), prefix=cluster_prefix, wait_replicas=2, wait_timeout_ms=100)
    try:
        with caplog.at_level("WARNING", logger="memstrata.buffer.redis"):
            for n in range(3):
                started = time.monotonic()
                with pytest.raises(BufferUnavailable, match="only 1 of 2 replica"):
                    strict.append(scope, [turn(n)], max_turns=10)
                assert time.monotonic() - started < 1.0  # the 100 ms timeout, not the 1 s default
            assert strict.degraded and strict.unacknowledged_writes == 3
            entered = [r for r in caplog.records if "refused until enough replicas" in r.message]
            assert len(entered) == 1
            strict.wait_replicas = 1  # what the cluster can acknowledge
            strict.append(scope, [turn(9)], max_turns=10)
        assert not strict.degraded and strict.unacknowledged_writes == 3
        assert any("acknowledged by replicas again" in r.message for r in caplog.records)
        assert [t.id for t in strict.window(scope) or []] == ["t0", "t1", "t2", "t9"]  # applied, never acknowledged
    finally:
        strict.close()
