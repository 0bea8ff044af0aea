"""Fixtures of the Redis Cluster tests: the local cluster of scripts/redis_cluster.sh (three masters,
three replicas on 127.0.0.1:7000-7005), a random key prefix per test, keys deleted afterwards.

`MEMSTRATA_TEST_REDIS_CLUSTER_URL` overrides the cluster (default redis+cluster://127.0.0.1:7000).
Unreachable: skipped locally, failed under CI=true.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memstrata.buffer.redis import RedisBuffer
from tests.conftest import service_missing

DEFAULT_URL = "redis+cluster://127.0.0.1:7000"


def cluster_url() -> str:
    return os.environ.get("MEMSTRATA_TEST_REDIS_CLUSTER_URL", DEFAULT_URL)


def cluster_client() -> Any:
    """A redis-py RedisCluster on the test cluster, or skip (fail under CI)."""
    redis = pytest.importorskip("redis")
    from redis.cluster import RedisCluster

    try:
        return RedisCluster.from_url(cluster_url().replace("+cluster", ""), decode_responses=True, socket_timeout=2)
    except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException) as exc:
        service_missing(f"Redis Cluster at {cluster_url()} is not reachable (run scripts/redis_cluster.sh): {exc}")
        raise


@pytest.fixture
def cluster_prefix() -> Iterator[str]:
    client = cluster_client()
    prefix = f"memstrata-test-{uuid.uuid4().hex[:10]}:"
    try:
        yield prefix
    finally:
        for key in list(client.scan_iter(match=f"{prefix}*", count=500)):
            client.delete(key)
        client.close()


@pytest.fixture
def buffer(cluster_prefix: str) -> Iterator[RedisBuffer]:
    """The buffer contract suite's backend: Redis Cluster, writes acknowledged by one replica."""
    backend = RedisBuffer(cluster_url(), ttl_seconds=3600, prefix=cluster_prefix, wait_replicas=1)
    try:
        yield backend
    finally:
        backend.close()
