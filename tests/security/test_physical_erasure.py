"""After erasure a marker string is nowhere: not in the SQLite file bytes (with -wal/-shm), not in
a `pg_dump`, not in any Redis key or value, before and after `memstrata compact`; and on PostgreSQL,
after compacting (VACUUM FULL), not in the table and index files either (plain VACUUM leaves it there:
docs/privacy.md). Each check first sees the marker before the erasure, so it can see it at all."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from memstrata.models import Scope
from tests.security.conftest import Backend

MARKER = "Qvxphysicalmarker"
USER = "acme:gone"


def fill(memory: Any) -> None:
    for i in range(40):
        record = memory.add(f"{MARKER} fact {i} about the user", scope=USER, metadata={"note": MARKER})
        memory.update(record.id, scope=USER, content=f"{MARKER} updated fact {i}")
    scope = Scope(USER, session_id="s1")
    for i in range(14):
        memory.add_message("user", f"{MARKER} turn {i}", scope=scope)
    memory.upsert_entity(MARKER, scope=USER, summary=f"{MARKER} friend")
    memory.set_fact("identity", "city", MARKER, scope=USER)
    memory.end_session(scope=scope)
    for i in range(3):  # a session still open: its turns are in the buffer (Redis) when the user is erased
        memory.add_message("user", f"{MARKER} open turn {i}", scope=Scope(USER, session_id="s2"))


def relation_files_traces(dbname: str, marker: str) -> int:
    from tests.support.pg import connect_admin

    with connect_admin(dbname) as admin:
        data = Path(admin.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
        paths = [
            tuple(row)
            for row in admin.execute(
                "SELECT pg_relation_filepath(c.oid), c.relname FROM pg_class c "
                "WHERE c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL "
                "AND c.relnamespace IN ('public'::regnamespace, 'pg_toast'::regnamespace)"
            ).fetchall()
        ]
    found = 0
    for relative, _ in paths:
        base = data / relative
        for segment in [base, *sorted(base.parent.glob(base.name + ".[0-9]*"))]:
            if segment.exists():
                found += segment.read_bytes().count(marker.encode())
    return found


def test_erasure_leaves_no_marker_in_files_dumps_or_redis(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    redis_url = f"redis://127.0.0.1:6379/{14}"
    buffer = redis_url if _redis_up(redis_url) else "memory://"
    with backend.memory(buffer=buffer) as memory:
        fill(memory)
        assert backend.traces(MARKER) > 0
        if buffer != "memory://":
            assert _redis_traces(redis_url, MARKER) > 0
        memory.erase_user(scope=USER)
        assert backend.traces(MARKER) == 0
        if buffer != "memory://":
            assert _redis_traces(redis_url, MARKER) == 0
    compact_with_the_cli(backend, monkeypatch)
    assert backend.traces(MARKER) == 0


def compact_with_the_cli(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """`memstrata compact` on the backend's store, as an operator runs it after erasures."""
    from memstrata.cli import main as cli_main

    if backend.owner_url:
        monkeypatch.setenv("MEMSTRATA_STORE_OWNER", backend.owner_url)
    assert cli_main(["--store", backend.url, "--embedder", "hashing:64", "compact"]) == 0


@pytest.mark.postgres
def test_postgres_compact_removes_erased_bytes_from_the_table_files(backend: Backend) -> None:
    if backend.kind != "postgres" or os.geteuid() != 0:
        pytest.skip("reads PostgreSQL's data directory (root on the CI machine)")
    from tests.support.pg import connect_admin, database_of

    marker = f"Qvx{uuid.uuid4().hex[:12]}"
    with backend.memory() as memory:
        for i in range(60):
            memory.add(f"{marker} fact {i}", scope=USER)
        dbname = database_of(backend.url)
        with connect_admin(dbname) as admin:
            admin.execute("CHECKPOINT")  # the rows reach the table files
        assert relation_files_traces(dbname, marker) > 0
        memory.erase_user(scope=USER)
        report = memory.store.compact()  # type: ignore[attr-defined]
        assert set(report["tables"]) >= {"memories", "history", "items"} and report["dead_rows_kept"] == {}
        assert relation_files_traces(dbname, marker) == 0


def _redis_up(url: str) -> bool:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
        return True
    except redis.RedisError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("Redis must run under CI=true")
        return False


def _redis_traces(url: str, marker: str) -> int:
    from memstrata_bench.reliability import redis_traces

    return redis_traces(url, marker)
