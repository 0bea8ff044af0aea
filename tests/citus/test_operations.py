"""Operations on a live Citus cluster: a worker is added and the shards are rebalanced onto it online
(`citus_rebalance_start()`, logical replication) while other threads search and write through the
application role. No call may fail and every acknowledged write must be readable afterwards.

The test works in a database of its own (`scripts/citus.sh createdb`) and a fourth node cluster on
`EXTRA_PORT` (`scripts/citus.sh node-up`), both removed afterwards, so the shared `memstrata` database's
nodes are never changed.
"""

from __future__ import annotations

import random
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import EventType, Scope, new_event, new_record, utcnow
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from tests.citus.conftest import DIMENSIONS, EMBEDDER
from tests.support.citus import ENV_VAR, citus_schema, connect_coordinator
from tests.support.pg import set_user

pytestmark = pytest.mark.citus

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "citus.sh"
EXTRA_PORT = 5443
EMBED = HashingEmbedder(DIMENSIONS)
USERS = [f"ops-user-{n}" for n in range(24)]
REBALANCE_TIMEOUT_S = 150
SHARDS = 4
"""Per table: with three workers the rebalancer moves one or two shard groups of each colocation group."""


def citus_sh(*args: str) -> None:
    subprocess.run(["bash", str(SCRIPT), *args], check=True, capture_output=True, timeout=300)


@pytest.fixture
def own_database(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A database of this test on the three nodes, plus the extra node ready to be added (database and
    extensions made, not yet registered). Everything is dropped afterwards."""
    with connect_coordinator():
        pass  # skips (fails under CI) when Citus is not running
    dbname = f"memstrata_ops_{secrets.token_hex(3)}"
    citus_sh("createdb", dbname)
    try:
        citus_sh("node-up", str(EXTRA_PORT))
        with psycopg.connect(host="127.0.0.1", port=EXTRA_PORT, user="root", dbname="postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{dbname}"')
        with psycopg.connect(host="127.0.0.1", port=EXTRA_PORT, user="root", dbname=dbname, autocommit=True) as c:
            c.execute("CREATE EXTENSION citus")
            c.execute("CREATE EXTENSION vector")
        monkeypatch.setenv(ENV_VAR, f"postgresql://root@127.0.0.1:5440/{dbname}")
        yield dbname
    finally:
        citus_sh("dropdb", dbname)
        citus_sh("node-drop", str(EXTRA_PORT))


class Traffic:
    """Searches and writes from background threads, each user's acknowledged write ids recorded."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.acknowledged: dict[str, list[str]] = {u: [] for u in USERS}
        self.searches = 0
        self._lock = threading.Lock()

    def writer(self, seed: int) -> None:
        rng = random.Random(seed)
        n = 0
        while not self.stop.is_set():
            user = rng.choice(USERS)
            record = new_record(scope=Scope(user), content=f"{user} wrote note {seed}-{n} about green tea")
            n += 1
            try:
                self.store.save(
                    user,
                    [record],
                    [new_event(record, EventType.ADD, after=record.content)],
                    EMBED.embed_documents([record.content]),
                )
                self.store.put_item(user, "profile", "last", {"id": record.id})
            except Exception as exc:  # every failure counts; the test asserts there is none
                self._failed(f"write {user}: {exc!r}")
                continue
            with self._lock:
                self.acknowledged[user].append(record.id)

    def searcher(self, seed: int) -> None:
        rng = random.Random(seed)
        vector = EMBED.embed_query("green tea note")
        while not self.stop.is_set():
            user = rng.choice(USERS)
            try:
                near, matched = self.store.hybrid_candidates(user, vector, "green tea", MemoryFilter(), limit=10)
                if any(h.record.user_id != user for h in (*near, *matched)):
                    self._failed(f"search for {user} returned another user's row")
                self.store.record_access(user, [h.record.id for h in near[:3]], utcnow())  # what a search writes
            except Exception as exc:
                self._failed(f"search {user}: {exc!r}")
                continue
            with self._lock:
                self.searches += 1

    def _failed(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)
        time.sleep(0.1)

    def written(self) -> int:
        with self._lock:
            return sum(len(ids) for ids in self.acknowledged.values())


def placements(admin: psycopg.Connection[Any]) -> dict[int, int]:
    """Shard placements per worker port (every table of the database)."""
    rows = admin.execute("SELECT nodeport, count(*) FROM citus_shards GROUP BY 1").fetchall()
    return {int(port): int(count) for port, count in rows}


def test_adding_a_worker_and_rebalancing_online_loses_no_acknowledged_write(own_database: str) -> None:
    with citus_schema(shard_count=SHARDS) as citus:
        store = PostgresStore.open(citus.app_url, owner_url=citus.owner_url, pool_size=6)
        store.bind_embedder(EMBEDDER, DIMENSIONS)
        traffic = Traffic(store)
        threads = [threading.Thread(target=traffic.writer, args=(s,)) for s in (1, 2)]
        threads += [threading.Thread(target=traffic.searcher, args=(s,)) for s in (3, 4)]
        try:
            for t in threads:
                t.start()
            while traffic.written() < 100:
                time.sleep(0.2)
            with connect_coordinator() as admin:
                admin.execute("SELECT citus_add_node('127.0.0.1', %s)", [EXTRA_PORT])
                assert EXTRA_PORT not in placements(admin)
                admin.execute("SELECT citus_rebalance_start()")
                started = time.monotonic()
                state = _wait_for_rebalance(admin)
                print(f"rebalance {time.monotonic() - started:.1f} s, {traffic.written()} writes")
                during = traffic.written()
                moved = placements(admin).get(EXTRA_PORT, 0)
            time.sleep(2)  # traffic on the new layout
        finally:
            traffic.stop.set()
            for t in threads:
                t.join(timeout=30)
        assert state == "finished", state
        assert moved > 0
        assert traffic.errors == []
        assert traffic.searches > 0 and traffic.written() > during > 100
        for user, ids in traffic.acknowledged.items():
            found = {r.id for r in store.get(user, ids)}
            assert found == set(ids), f"{user}: {len(set(ids) - found)} acknowledged writes lost"
            assert store.count_memories(user, MemoryFilter()) == len(ids)
        store.close()
        _application_role_is_still_isolated_on_the_new_worker(citus.app_url, own_database, citus.schema)


def _wait_for_rebalance(admin: psycopg.Connection[Any]) -> str:
    deadline = time.monotonic() + REBALANCE_TIMEOUT_S
    while time.monotonic() < deadline:
        row = admin.execute("SELECT state FROM citus_rebalance_status() ORDER BY job_id DESC LIMIT 1").fetchone()
        state = str(row[0]) if row else "finished"
        if state in ("finished", "failed", "cancelled"):
            return state
        time.sleep(1)
    failures = admin.execute(
        "SELECT message FROM pg_dist_background_task WHERE message <> '' ORDER BY task_id DESC LIMIT 3"
    ).fetchall()
    admin.execute("SELECT citus_rebalance_stop()")
    return f"timed out: {failures}"


def _application_role_is_still_isolated_on_the_new_worker(app_url: str, dbname: str, schema: str) -> None:
    """On the worker the shards moved to, as the application role: no user set sees no row, a user sees
    only their rows."""
    params = psycopg.conninfo.conninfo_to_dict(app_url)
    with psycopg.connect(
        host="127.0.0.1",
        port=EXTRA_PORT,
        dbname=dbname,
        user=params["user"],
        password=params["password"],
        options=f"-csearch_path={schema},public",
        autocommit=True,
    ) as app:
        with app.transaction():
            assert app.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        with app.transaction():
            set_user(app, USERS[0])
            users = app.execute("SELECT DISTINCT user_id FROM memories").fetchall()
        assert users == [(USERS[0],)]
