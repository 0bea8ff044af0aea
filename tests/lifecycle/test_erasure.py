"""Erasure proof (GDPR Art. 17), on SQLite and Postgres, each with a Redis buffer.

One user writes unique marker strings into every layer: facts (updated, superseded, forgotten,
expired, agent-scoped), episodes through the conversation layer (Redis buffer + rolling session
summary), consolidated summaries, entities, profile facts, the user context, procedures, queue
items and lifecycle state. Two other users write their own data. Before the erasure every scanner
must see the user's markers (so the scans are known to work); after it none may: not a scan of
every table, not the raw SQLite file and its WAL, not a `pg_dump` of the database, not a SCAN of
every Redis key. The other users' data is unchanged, and the receipt holds no personal data.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memstrata import MemoryKind, NewMemory, Scope, StoreError
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.layers.conversation import Conversation
from memstrata.namespaces import RECEIPT, SYSTEM_USER
from tests.lifecycle.conftest import T0, Backend, Clock, LifecycleMemory, RedisFixture


class Markers:
    """Unique, FTS-tokenizable marker words (`mk` + 10 hex digits); `new()` hands out the next one."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.issued: list[str] = [user]
        self.removed: set[str] = set()
        """Markers the user's own forget or an expiry already removed (no table may hold them)."""

    def new(self, *, removed: bool = False) -> str:
        marker = f"mk{secrets.token_hex(5)}"
        self.issued.append(marker)
        if removed:
            self.removed.add(marker)
        return marker

    @property
    def live(self) -> set[str]:
        return set(self.issued) - self.removed

    def found_in(self, data: bytes) -> set[str]:
        """Markers present in `data`, whole or by their last 8 characters (FTS5 stores terms
        prefix-compressed against their neighbours, so a term's start may not appear verbatim)."""
        lowered = data.lower()
        return {m for m in self.issued if m.encode() in lowered or m[-8:].encode() in lowered}


def populate(memory: Any, conversation: Conversation, marks: Markers) -> None:
    """Write markers into every layer for `marks.user`."""
    user = marks.user
    facts = [
        memory.add(f"{user} noted {marks.new()} in the garden", scope=user, metadata={"tag": marks.new()})
        for _ in range(2)
    ]
    memory.update(facts[0].id, scope=user, content=f"{user} noted {marks.new()} in the shed")
    memory.supersede(facts[1].id, f"{user} now notes {marks.new()}", scope=user)
    forgotten = memory.add(f"{user} regrets {marks.new(removed=True)}", scope=user)
    memory.forget(forgotten.id, scope=user)
    memory.add(f"{user} agent note {marks.new()}", scope=Scope(user, agent_id="helper"))
    memory.add(f"{user} short-lived {marks.new(removed=True)}", scope=user, expires_at=T0 - timedelta(minutes=1))
    assert memory.sweep(scope=user).expired == 1
    session = Scope(user, session_id="s1")
    conversation.add_messages(
        session,
        [
            {"role": "user", "content": f"My friend Dana lives in Porto since 2019, code {marks.new()}."}
            for _ in range(8)
        ],
    )
    memory.add_many(
        [
            NewMemory(
                f"{user} hiked trail {marks.new()} in 2025",
                kind=MemoryKind.EVENT,
                created_at=T0 - timedelta(days=60, hours=i),
            )
            for i in range(10)
        ],
        scope=user,
        dedupe=False,
    )
    assert memory.consolidate(scope=user).compressed == 10
    memory.upsert_entity(
        f"Dana {marks.new()}", scope=user, summary=f"friend {marks.new()}", attributes={"code": marks.new()}
    )
    memory.set_fact("misc", "code", marks.new(), scope=user)
    memory.store.put_item(user, "context", "user", {"facts": [marks.new()], "last_topics": [marks.new()]})
    memory.add_procedure(f"task {marks.new()}", instruction=f"always {marks.new()}", scope=user)
    memory.store.put_item(user, "queue", f"job-{user}", {"text": marks.new(), "status": "pending"})
    memory.store.put_item(user, "langgraph", f'["users", "{user}", "notes"]', {"value": {"text": marks.new()}})
    for _ in range(20):  # the turn policy's count (every 20 turns) writes the user's lifecycle state
        memory.add_message("user", f"and {marks.new()}", scope=Scope(user, session_id="s2"))
    assert conversation.buffer.window(session)  # the Redis buffer holds the latest turns
    assert conversation.summary(session)  # the rolling summary was folded


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def setup(
    request: pytest.FixtureRequest,
    backends: Callable[[str], Backend],
    redis_buffer: RedisFixture,
    clock: Clock,
) -> Iterator[tuple[Backend, Any, Conversation]]:
    backend = backends(request.param)
    memory = LifecycleMemory(
        store=backend.store,
        embedder=HashingEmbedder(64),
        clock=clock,
        buffer=redis_buffer.buffer,
        track_access=False,
    )
    conversation = Conversation(
        store=memory.store,
        semantic=memory._layers.semantic,
        buffer=redis_buffer.buffer,
        clock=clock,
        window_size=4,
        summary_threshold=3,
    )
    yield backend, memory, conversation


# -- scanners -------------------------------------------------------------------------------------


def sqlite_tables(path: Path) -> bytes:
    """Every row of every table (FTS5 shadow tables included), as bytes."""
    with sqlite3.connect(path) as raw:
        tables = [r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        chunks: list[bytes] = []
        for table in tables:
            for row in raw.execute(f'SELECT * FROM "{table}"'):
                chunks.extend(v if isinstance(v, bytes) else str(v).encode() for v in row)
    return b"\n".join(chunks)


def sqlite_files(path: Path) -> dict[str, bytes]:
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    return {f.name: f.read_bytes() for f in files if f.exists()}


def postgres_tables(backend: Backend) -> bytes:
    from tests.support.pg import connect_admin, database_of

    assert backend.app_url is not None
    with connect_admin(database_of(backend.app_url)) as admin:
        tables = admin.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        chunks: list[bytes] = []
        for schema, table in tables:
            rows = admin.execute(f'SELECT t::text FROM "{schema}"."{table}" t').fetchall()
            chunks.extend(row[0].encode() for row in rows)
    assert tables, "no tables found: the scan would prove nothing"
    return b"\n".join(chunks)


def pg_dump(backend: Backend) -> bytes:
    from psycopg.conninfo import make_conninfo

    from tests.support.pg import admin_url, database_of

    assert backend.app_url is not None
    conninfo = make_conninfo(admin_url(), dbname=database_of(backend.app_url))
    return subprocess.run(["pg_dump", "--no-owner", "-d", conninfo], check=True, capture_output=True).stdout


def redis_everything(redis: RedisFixture) -> bytes:
    """SCAN every key of the test database (not just our prefix), with its value."""
    chunks: list[bytes] = []
    for key in redis.client.scan_iter(count=1000):
        chunks.append(key)
        kind = redis.client.type(key)
        if kind == b"list":
            chunks.extend(redis.client.lrange(key, 0, -1))
        elif kind == b"hash":
            for field, value in redis.client.hgetall(key).items():
                chunks.extend([field, value])
        elif kind == b"string":
            chunks.append(redis.client.get(key) or b"")
        elif kind == b"set":
            chunks.extend(redis.client.smembers(key))
        elif kind == b"zset":
            chunks.extend(redis.client.zrange(key, 0, -1))
    return b"\n".join(chunks)


def scans(backend: Backend, redis: RedisFixture) -> dict[str, bytes]:
    found = {"redis": redis_everything(redis)}
    if backend.name == "sqlite":
        assert backend.path is not None
        found["tables"] = sqlite_tables(backend.path)
        found.update({f"file:{name}": data for name, data in sqlite_files(backend.path).items()})
    else:
        found["tables"] = postgres_tables(backend)
        found["pg_dump"] = pg_dump(backend)
    return found


def snapshot(memory: Any, redis: RedisFixture, user: str) -> dict[str, Any]:
    """Everything of `user`: the export (minus its timestamp) and the user's Redis keys and values."""
    document = memory.export_user(scope=user).model_dump(mode="json", exclude={"exported_at"})
    keys = {k: v for k, v in redis.dump().items() if f"{{{user}}}".encode() in k}
    return {"export": document, "redis": keys}


# -- the proof -------------------------------------------------------------------------------------


@pytest.mark.redis
def test_erase_user_leaves_no_trace_in_any_layer_or_backend(
    setup: tuple[Backend, Any, Conversation], redis_buffer: RedisFixture
) -> None:
    backend, memory, conversation = setup
    target = Markers(f"u{secrets.token_hex(4)}")
    others = [Markers(f"o{secrets.token_hex(4)}") for _ in range(2)]
    for marks in [others[0], target, others[1]]:
        populate(memory, conversation, marks)
    before_others = [snapshot(memory, redis_buffer, o.user) for o in others]

    before = scans(backend, redis_buffer)
    # The scans work: everything the user wrote and did not forget is visible to them now.
    in_tables = target.found_in(before["tables"])
    assert in_tables >= target.live, "the table scan misses the user's data"
    assert in_tables.isdisjoint(target.removed), "forgotten or expired text is still in a table"
    assert target.found_in(before["redis"]), "the Redis scan misses the user's buffer"
    if backend.name == "postgres":
        assert target.found_in(before["pg_dump"]) == target.live

    receipt = memory.erase_user(scope=target.user)

    after = scans(backend, redis_buffer)
    for where, data in after.items():
        assert target.found_in(data) == set(), f"{where} still holds the erased user's text"
    assert [snapshot(memory, redis_buffer, o.user) for o in others] == before_others
    for other in others:
        assert other.found_in(after["tables"]) == other.live

    counts = receipt.counts
    for layer in (
        "semantic",
        "episodes",
        "summaries",
        "procedures",
        "entities",
        "profile",
        "sessions",
        "queue",
        "lifecycle",
        "langgraph",
        "history",
        "buffer",
    ):
        assert counts[layer] > 0, f"receipt counts nothing for {layer}: {counts}"
    assert counts["other"] == 0
    stored = memory.store.get_item(SYSTEM_USER, RECEIPT, receipt.request_id)
    assert stored is not None and stored.value == receipt.to_value()
    serialized = json.dumps(stored.value).encode()
    assert target.found_in(serialized) == set() and target.user.encode() not in serialized
    assert receipt.matches(target.user) and not receipt.matches(others[0].user)
    assert memory.erasure_receipt(receipt.request_id) == receipt
    assert memory.export_user(scope=target.user).counts == {"memories": 0, "history": 0, "items": 0}


def test_erasing_again_and_unknown_users_is_harmless(memory: Any) -> None:
    memory.add("Bob likes chess", scope="bob")
    first = memory.erase_user(scope="nobody")
    assert sum(first.counts.values()) == 0
    assert memory.export_user(scope="bob").counts["memories"] == 1
    assert first.request_id != memory.erase_user(scope="nobody").request_id


def test_receipt_secret_is_needed_to_match(make_memory: Callable[..., Any]) -> None:
    from tests.lifecycle.conftest import use_policy

    memory = make_memory()
    memory = use_policy(memory, receipt_secret="s3cret")
    receipt = memory.erase_user(scope="alice")
    assert receipt.algorithm.endswith(":keyed")
    assert receipt.matches("alice", secret="s3cret") and not receipt.matches("alice")


def test_sqlite_purge_refuses_to_report_success_while_a_reader_pins_old_pages(
    make_memory: Callable[..., Any], tmp_path: Path
) -> None:
    """With another connection holding an old snapshot the WAL cannot be checkpointed, so the deleted
    text would stay in the files: the store says so instead of returning, and a later erase finishes."""
    memory = make_memory("pinned")
    marks = Markers("alice")
    memory.add_many([NewMemory(f"secret {marks.new()}") for _ in range(5)], scope="alice")
    memory.store._conn.execute("PRAGMA busy_timeout = 100")
    reader = sqlite3.connect(tmp_path / "pinned.db")
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        with pytest.raises(StoreError, match="still reading an older snapshot"):
            memory.erase_user(scope="alice")
    finally:
        reader.rollback()
        reader.close()
    memory.erase_user(scope="alice")
    for name, data in sqlite_files(tmp_path / "pinned.db").items():
        assert marks.found_in(data) == set(), name
