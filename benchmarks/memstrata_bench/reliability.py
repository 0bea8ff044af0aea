"""Reliability probes (issue 15): the figures of the "Reliability" section of BENCHMARKS.md.

    python -m memstrata_bench.reliability --postgres-admin-url postgresql://root@127.0.0.1:5432/postgres \
        --redis-url redis://127.0.0.1:6379/15 --out benchmarks/results/reliability.json

Every probe runs on SQLite (a file) and on PostgreSQL (a throwaway database, the store connected as
a NOSUPERUSER NOBYPASSRLS role, so row-level security applies), and counts failures:

* cross-user reads/writes: random operations of several users (adds, updates, learns, forgets,
  searches, imports of a forged document naming another user and another tenant's queued job); any
  record, item or hit of one user visible to or written for another is counted;
* marker strings after the receipt: a user's queued jobs erased while the worker runs them (in-flight
  work), and an erasure by another `Memory` (another process) while this one holds the user's turns
  in its in-process buffer; the marker is then searched in the API, in the SQLite file bytes
  (with -wal/-shm), in a `pg_dump`, and in every Redis key and value;
* 5xx on bad input: hostile values (lone surrogates, NUL, 2 MB strings, JSON nested 5,000 deep, wrong
  types) in every field of every REST body and in path parameters, through the real ASGI app;
* contradictory current facts after 20 concurrent learns of one user (and errors raised);
* acknowledged writes lost on kill -9: a writer subprocess prints each memory id once `add` returned,
  is killed with SIGKILL mid-stream, and every printed id is looked up afterwards;
* PostgreSQL search latency at 10,000 memories of one user for queries of up to 32 KB of distinct
  words (p50/p99 of the store's keyword search and of a hybrid search, with the query-term cap), on an
  idle store and while 4 other threads search without pause; with `--uncapped`, the same keyword
  search over every word of the query (no cap: the behaviour before) for comparison.

All data is synthetic (written here): these are correctness counts and latencies, not quality figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstrata import Memory, Scope, SearchFilter, UsageError
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.storage.base import MemoryFilter, Store

from .report import latency_summary, machine_info

MARKER = "Zqxreliabilitymarker"
SURROGATE, NUL, HUGE = "a\ud800b", "a\x00b", "x" * (2 * 1024 * 1024)
DIMENSIONS = 64


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# -- backends ---------------------------------------------------------------------------------------


class Backend:
    """A store kind: `open()` opens another connection to the same data; `traces(marker)` counts the
    marker in everything the backend keeps."""

    def __init__(
        self,
        kind: str,
        open_store: Callable[[], Store],
        traces: Callable[[str], int],
        url: str,
        owner_url: str | None = None,
    ) -> None:
        self.kind, self.open_store, self.traces, self.url, self.owner_url = kind, open_store, traces, url, owner_url

    def memory(self, **kwargs: Any) -> Memory:
        return Memory(store=self.open_store(), embedder=HashingEmbedder(DIMENSIONS), **kwargs)


@contextmanager
def sqlite_backend() -> Iterator[Backend]:
    from memstrata.storage.sqlite import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"

        def traces(marker: str) -> int:
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            return sum(f.read_bytes().count(marker.encode()) for f in files if f.exists())

        yield Backend("sqlite", lambda: SQLiteStore(path), traces, f"sqlite:///{path}")


@contextmanager
def postgres_backend(admin_url: str) -> Iterator[Backend]:
    """A throwaway database owned by a fresh owner role, used through a fresh NOSUPERUSER app role."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from memstrata.storage.postgres import PostgresStore

    suffix = secrets.token_hex(4)
    db, owner, app, password = (
        f"memstrata_rel_{suffix}",
        f"rel_owner_{suffix}",
        f"rel_app_{suffix}",
        secrets.token_hex(8),
    )
    params: dict[str, Any] = dict(conninfo_to_dict(admin_url))
    with psycopg.connect(admin_url, autocommit=True) as admin:
        for role in (owner, app):
            admin.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(db), sql.Identifier(owner)))
        try:
            with psycopg.connect(make_conninfo(**(params | {"dbname": db})), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            app_url = make_conninfo(**(params | {"dbname": db, "user": app, "password": password}))
            owner_url = make_conninfo(**(params | {"dbname": db, "user": owner, "password": password}))
            dump_url = make_conninfo(**(params | {"dbname": db}))

            def traces(marker: str) -> int:
                dump = subprocess.run(["pg_dump", "--data-only", "-d", dump_url], capture_output=True, check=True)
                return dump.stdout.count(marker.encode())

            opener = lambda: PostgresStore.open(app_url, owner_url=owner_url)  # noqa: E731
            yield Backend("postgres", opener, traces, app_url, owner_url)
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))
            for role in (app, owner):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def redis_traces(redis_url: str | None, marker: str) -> int:
    """The marker's occurrences in every key and value of the Redis database (0 without Redis).
    Values are read by type (not with DUMP, whose RDB encoding may compress them)."""
    if redis_url is None:
        return 0
    import redis

    client: Any = redis.Redis.from_url(redis_url)
    needle = marker.encode()
    found = 0
    for key in client.scan_iter(count=1000):
        found += key.count(needle)
        found += sum(value.count(needle) for value in _redis_values(client, key))
    client.close()
    return found


def _redis_values(client: Any, key: bytes) -> list[bytes]:
    kind = client.type(key).decode()
    if kind == "string":
        return [client.get(key) or b""]
    if kind == "list":
        return list(client.lrange(key, 0, -1))
    if kind == "hash":
        return [part for pair in client.hgetall(key).items() for part in pair]
    if kind == "set":
        return list(client.smembers(key))
    if kind == "zset":
        return list(client.zrange(key, 0, -1))
    if kind == "stream":
        return [part for _, fields in client.xrange(key) for pair in fields.items() for part in pair]
    return [client.dump(key) or b""]


# -- probes -----------------------------------------------------------------------------------------


def probe_isolation(backend: Backend, *, operations: int = 300, seed: int = 15) -> dict[str, int]:
    """Random operations of three users; count anything of one user seen by or written for another."""
    rng = random.Random(seed)
    users = ["acme:u0", "acme:u1", "globex:u2"]
    leaks = ops = 0
    with backend.memory() as memory:
        for i in range(operations):
            user = rng.choice(users)
            tag = f"owner-{user}-{i}"
            action = rng.choice(["add", "learn", "search", "update", "forget", "import"])
            try:
                if action == "add":
                    memory.add(f"{tag} note", scope=user, metadata={"owner": user})
                elif action == "learn":
                    memory.learn(f"I live in City{user[-1]}x{i}.", scope=user)
                elif action == "search":
                    hits = memory.search("owner note city", scope=user, k=50)
                    leaks += sum(1 for h in hits if h.memory.scope.user_id != user)
                elif action == "update" or action == "forget":
                    others = memory.list(scope=rng.choice(users), limit=5)
                    for record in others:  # another user's id used in this user's scope must not apply
                        try:
                            if action == "update":
                                memory.update(record.id, scope=user, content=f"{tag} overwritten")
                                applied = True
                            else:
                                applied = memory.forget(record.id, scope=user)
                            leaks += applied and record.scope.user_id != user
                        except UsageError:
                            pass
                else:
                    victim = rng.choice([u for u in users if u != user])
                    memory.import_user(forged_document(user, victim), scope=user)
                    memory.process_queue()
                ops += 1
            except UsageError:
                ops += 1
        for user in users:
            for record in memory.list(scope=user, limit=10_000, filters=SearchFilter(include_superseded=True)):
                owner = record.metadata.get("owner")
                leaks += record.scope.user_id != user or (owner is not None and owner != user)
                leaks += "overwritten" in record.content and f"owner-{user}-" not in record.content
            leaks += sum(1 for r in memory.list(scope=user, limit=10_000) if "Evilcity" in r.content)
    return {"operations": ops, "cross_user_reads_or_writes": leaks}


def forged_document(importer: str, victim: str) -> dict[str, Any]:
    now = "2026-01-01T00:00:00+00:00"
    job = {
        "id": "job-evil",
        "status": "pending",
        "attempts": 0,
        "error": None,
        "scope": {"user_id": victim, "agent_id": None, "session_id": None},
        "messages": [{"role": "user", "content": "I live in Evilcity.", "at": now, "speaker": None}],
        "created_at": now,
        "finished_at": None,
    }
    return {
        "format": "memstrata-export",
        "version": 1,
        "user_id": importer,
        "exported_at": now,
        "source": {"store": "x", "embedder": "hashing-64", "dimensions": 64, "memstrata_version": "x"},
        "memories": [],
        "history": [],
        "items": [{"namespace": "queue", "key": "job-evil", "value": job, "updated_at": now}],
    }


def probe_erasure(backend: Backend, redis_url: str | None, *, trials: int = 3) -> dict[str, int]:
    """Marker occurrences left after erasure receipts, with the user's work in flight."""
    left = 0
    for trial in range(trials):
        user = f"acme:erased{trial}"
        with backend.memory(buffer=redis_url or "memory://") as memory:
            for i in range(60):
                memory.learn_later(f"I moved to {MARKER}{i} town.", scope=user)
            worker = threading.Thread(target=memory.process_queue, kwargs={"limit": 1000})
            worker.start()
            time.sleep(0.05 * (trial + 1))
            memory.erase_user(scope=user)
            worker.join(60)
            left += _visible(memory, user)
        with backend.memory(buffer="memory://") as server, backend.memory(buffer="memory://") as other:
            scope = Scope(user, session_id="s1")
            for i in range(6):
                server.add_message("user", f"turn {i} in {MARKER}", scope=scope)
            other.erase_user(scope=user)
            left += sum(MARKER in t.content for t in server.recent_turns(scope=scope))
            for i in range(12):
                server.add_message("user", f"fresh turn {i}", scope=scope)
            left += MARKER in server.session_summary(scope=scope)
            left += _visible(server, user)
    return {
        "trials": trials,
        "marker_strings_after_receipt": left + backend.traces(MARKER) + redis_traces(redis_url, MARKER),
    }


def _visible(memory: Memory, user: str) -> int:
    records = memory.list(scope=user, limit=10_000, filters=SearchFilter(include_superseded=True, include_expired=True))
    return sum(MARKER in r.content for r in records) + memory.export_user(scope=user).to_json().count(MARKER)


REST_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/memories"): {
        "content": "ok",
        "kind": "fact",
        "metadata": {"k": "v"},
        "importance": 0.5,
        "source_ids": ["s"],
        "agent_id": "bot",
    },
    ("PATCH", "/memories/{memory_id}"): {"content": "ok2", "metadata": {"k": "v"}, "importance": 0.4},
    ("POST", "/memories/{memory_id}/supersede"): {"content": "ok3", "reason": "r"},
    ("POST", "/search"): {"query": "ok", "k": 5, "filters": {"metadata": {"k": "v"}, "kinds": ["fact"]}},
    ("PUT", "/profile/facts/{category}/{key}"): {"value": "Oslo"},
    ("PUT", "/entities/{name}"): {"type": "person", "summary": "a friend", "aliases": ["A"]},
    ("POST", "/procedures"): {"task": "t", "instruction": "i", "example_input": "x", "example_output": "y"},
    ("POST", "/learn"): {"messages": [{"role": "user", "content": "I live in Oslo.", "speaker": "al"}]},
    ("POST", "/sessions/{session_id}/messages"): {"messages": [{"role": "user", "content": "hi", "speaker": "al"}]},
    ("POST", "/context"): {"query": "ok", "max_tokens": 200, "session_id": "s1"},
}
HOSTILE: list[Any] = [SURROGATE, NUL, HUGE, nested(5_000), 1.5, None, -1, [1], {"a": 1}]


def mutations(body: Any, path: str = "") -> list[tuple[str, Any]]:
    """(field path, the body with that field replaced by a hostile value), for every field at any depth."""
    found: list[tuple[str, Any]] = []
    if isinstance(body, dict):
        for key, value in body.items():
            found += [(f"{path}.{key}", body | {key: h}) for h in HOSTILE]
            found += [(p, body | {key: m}) for p, m in mutations(value, f"{path}.{key}")]
            found.append((f"{path}.<key>", {**body, SURROGATE: value}))
    elif isinstance(body, list) and body:
        found += [(p, [m, *body[1:]]) for p, m in mutations(body[0], f"{path}[0]")]
    return found


def _raw(body: Any) -> bytes:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        return json.dumps(body).encode("ascii")
    finally:
        sys.setrecursionlimit(limit)


def probe_bad_input(backend: Backend) -> dict[str, Any]:
    """Hostile values in every REST body field and path parameter: count 5xx answers."""
    from fastapi.testclient import TestClient

    from memstrata.server.app import create_app
    from memstrata.server.config import ServerConfig

    requests = errors = 0
    failures: list[str] = []
    memory = backend.memory()
    headers = {"content-type": "application/json"}
    with TestClient(create_app(memory=memory, config=ServerConfig(auth=False, worker=False))) as client:
        base = "/v1/users/alice"
        memory_id = client.post(f"{base}/memories", content=_raw({"content": "seed"}), headers=headers).json()["id"]
        params = {"memory_id": memory_id, "category": "identity", "key": "city", "name": "Ana", "session_id": "s1"}
        for (method, template), body in REST_BODIES.items():
            target = base + template.format(**params)
            for field, mutated in mutations(body):
                status = client.request(method, target, content=_raw(mutated), headers=headers).status_code
                requests += 1
                if status >= 500:
                    errors += 1
                    failures.append(f"{method} {template} {field}: {status}")
        for bad in ("a%00b", "a%ED%A0%80b", "%C0%80", "x" * 5000):
            for template in (
                "/entities/{x}",
                "/memories/{x}",
                "/profile/facts/{x}/k",
                "/sessions/{x}",
                "/memories/{x}/history",
                "/erasures/{x}",
            ):
                requests += 1
                if client.get(base + template.replace("{x}", bad)).status_code >= 500:
                    errors += 1
                    failures.append(f"GET {template} {bad[:12]}")
        for read in ("/memories", "/entities", "/profile/facts", "/profile", "/export", "/sessions/s1"):
            requests += 1
            errors += client.get(base + read).status_code != 200
    memory.close()
    return {"requests": requests, "responses_5xx": errors, "failures": failures[:20]}


def probe_concurrent_learns(backend: Backend, *, trials: int = 5, learns: int = 20) -> dict[str, int]:
    contradictions = failures = 0
    with backend.memory() as memory:
        for trial in range(trials):
            user = f"acme:mover{trial}"
            start = threading.Barrier(learns)
            errors: list[BaseException] = []

            def learn(i: int, user: str = user, start: threading.Barrier = start, errors: list[Any] = errors) -> None:
                start.wait()
                try:
                    memory.learn(f"I live in City{i}.", scope=user)
                except BaseException as exc:  # noqa: BLE001 - every failure counts
                    errors.append(exc)

            threads = [threading.Thread(target=learn, args=(i,)) for i in range(learns)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
            current = memory.store.list_memories(user, MemoryFilter(metadata={"attribute": "location"}), limit=100)
            contradictions += max(0, len(current) - 1)
            failures += len(errors)
    return {
        "trials": trials,
        "learns_per_trial": learns,
        "contradictory_current_facts": contradictions,
        "errors": failures,
    }


def probe_kill9(backend: Backend, *, trials: int = 3) -> dict[str, int]:
    acknowledged = lost = 0
    for trial in range(trials):
        user = f"acme:writer{trial}"
        backend.memory().close()  # schema and embedder recorded before the writer starts
        env = os.environ | {"MEMSTRATA_REL_URL": backend.url, "MEMSTRATA_REL_OWNER_URL": backend.owner_url or ""}
        writer = subprocess.Popen(
            [sys.executable, "-m", "memstrata_bench.reliability", "writer", backend.kind, user],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert writer.stdout is not None
        first = writer.stdout.readline().strip()  # the writer is up (imports and store opened)
        ids: list[str] = [first] if first else []
        deadline = time.monotonic() + 1.0 + trial
        while first and time.monotonic() < deadline:
            line = writer.stdout.readline()
            if not line:
                break
            ids.append(line.strip())
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        with backend.memory() as memory:
            found = {r.id for r in memory.store.get(user, ids)}
        acknowledged += len(ids)
        lost += len(set(ids) - found)
    return {"trials": trials, "acknowledged_writes": acknowledged, "lost": lost}


def writer_main(kind: str, user: str) -> None:
    """The kill -9 victim: add memories forever, printing each id once `add` has returned."""
    url = os.environ["MEMSTRATA_REL_URL"]
    if kind == "sqlite":
        store: Any = url
    else:
        from memstrata.storage.postgres import PostgresStore

        store = PostgresStore.open(url, owner_url=os.environ.get("MEMSTRATA_REL_OWNER_URL") or None)
    memory = Memory(store=store, embedder=HashingEmbedder(DIMENSIONS))
    for i in range(10**9):
        record = memory.add(f"write {i} of the kill test", scope=user)
        print(record.id, flush=True)


def probe_search_latency(
    backend: Backend, *, memories: int = 10_000, queries: int = 40, load_threads: int = 4, uncapped: bool = False
) -> dict[str, Any]:
    """Keyword and hybrid search latency at `memories` rows of one user, queries up to 32 KB: on an
    otherwise idle store, then while `load_threads` threads search the same user with the same queries
    without pause (a server under load); with `uncapped`, also the keyword search over every word of
    two 32 KB queries (the behaviour before the term cap; about 100 s each)."""
    from memstrata.storage.postgres import PostgresStore

    rng = random.Random(8)
    vocabulary = [f"w{n}{chr(97 + n % 26)}" for n in range(20_000)]
    user = "acme:big"
    with backend.memory() as memory:
        store = memory.store
        assert isinstance(store, PostgresStore)
        _fill(memory, user, vocabulary, rng, memories)
        sizes = [64, 1024, 8 * 1024, 32 * 1024]
        texts = [_query(rng, vocabulary, sizes[i % len(sizes)]) for i in range(queries)]
        quiet = _timed_searches(memory, user, texts, sizes)
        with _searching(memory, user, texts, load_threads):
            loaded = _timed_searches(memory, user, texts, sizes)
        before = [_uncapped_keyword_ms(store, user, text) for text in texts[3::4][:2]] if uncapped else []
    return {
        "memories": memories,
        "queries": queries,
        "query_bytes": sizes,
        **quiet,
        "under_load": {"threads": load_threads, **loaded},
        **({"keyword_uncapped_32kb_ms": before} if before else {}),
    }


def _fill(memory: Memory, user: str, vocabulary: list[str], rng: random.Random, memories: int) -> None:
    from memstrata import NewMemory

    for start in range(0, memories, 500):
        batch = [
            NewMemory(content=" ".join(rng.sample(vocabulary, 12))) for _ in range(start, min(memories, start + 500))
        ]
        memory.add_many(batch, scope=user, dedupe=False)
    for text in (" ".join(rng.sample(vocabulary, 40)), " ".join(rng.sample(vocabulary, 4000))):
        memory.search(text, scope=user, k=10)  # warm the pool and the caches


def _timed_searches(memory: Memory, user: str, texts: list[str], sizes: list[int]) -> dict[str, Any]:
    """Each query once through the store's keyword search and once through a hybrid `Memory.search`."""
    keyword, hybrid = [], []
    for text in texts:
        started = time.perf_counter()
        memory.store.keyword_search(user, text, MemoryFilter(), limit=10)
        keyword.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        memory.search(text, scope=user, k=10)
        hybrid.append((time.perf_counter() - started) * 1000)
    return {
        **latency_summary(keyword, "keyword_ms"),
        **latency_summary(hybrid, "hybrid_ms"),
        "keyword_ms_max": round(max(keyword), 1),
        "hybrid_ms_max": round(max(hybrid), 1),
        "by_query_bytes": {
            size: {
                **latency_summary(keyword[i :: len(sizes)], "keyword_ms"),
                **latency_summary(hybrid[i :: len(sizes)], "hybrid_ms"),
            }
            for i, size in enumerate(sizes)
        },
    }


@contextmanager
def _searching(memory: Memory, user: str, texts: list[str], threads: int) -> Iterator[None]:
    """`threads` threads running hybrid searches of `texts` in a loop while the block runs."""
    stop = threading.Event()

    def loop(offset: int) -> None:
        while not stop.is_set():
            for text in texts[offset:] + texts[:offset]:
                if stop.is_set():
                    return
                memory.search(text, scope=user, k=10)

    workers = [threading.Thread(target=loop, args=(i * 7,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    try:
        yield
    finally:
        stop.set()
        for worker in workers:
            worker.join()


def _uncapped_keyword_ms(store: Any, user: str, text: str) -> float:
    from memstrata.core.text import words
    from memstrata.storage.postgres import queries as q

    terms = list(dict.fromkeys(words(text)))
    where = q.Where(user, MemoryFilter())
    started = time.perf_counter()
    with store.transaction(user) as cur:
        cur.execute(q.keyword_sql(where), [user, terms, q.keyword_batches(10)[0], *where.params, 10])
        cur.fetchall()
    return round((time.perf_counter() - started) * 1000, 1)


def _query(rng: random.Random, vocabulary: list[str], size: int) -> str:
    words: list[str] = []
    length = 0
    for word in rng.sample(vocabulary, len(vocabulary)):
        if length + len(word) + 1 > size:
            break
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


# -- main -------------------------------------------------------------------------------------------


def run(
    admin_url: str | None,
    redis_url: str | None,
    *,
    latency_memories: int,
    only: set[str] | None = None,
    load_threads: int = 4,
    uncapped: bool = False,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    kinds: list[tuple[str, Callable[[], Any]]] = [("sqlite", sqlite_backend)]
    if admin_url:
        kinds.append(("postgres", lambda: postgres_backend(admin_url)))
    for kind, opener in kinds:
        found: dict[str, Any] = {}
        for name, probe in (
            ("isolation", probe_isolation),
            ("erasure", lambda b: probe_erasure(b, redis_url)),
            ("bad_input", probe_bad_input),
            ("concurrent_learns", probe_concurrent_learns),
            ("kill9", probe_kill9),
        ):
            if only is not None and name not in only:
                continue
            with opener() as backend:
                started = time.perf_counter()
                found[name] = probe(backend) | {"seconds": round(time.perf_counter() - started, 1)}
                print(kind, name, found[name], file=sys.stderr, flush=True)
        if kind == "postgres" and (only is None or "search_latency" in only):
            with opener() as backend:
                found["search_latency"] = probe_search_latency(
                    backend, memories=latency_memories, load_threads=load_threads, uncapped=uncapped
                )
                print(kind, "search_latency", found["search_latency"], file=sys.stderr, flush=True)
        results[kind] = found
    return results


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if args and args[0] == "writer":
        writer_main(args[1], args[2])
        return
    parser = argparse.ArgumentParser(prog="python -m memstrata_bench.reliability", description=__doc__.split("\n")[0])
    parser.add_argument("--postgres-admin-url", help="a superuser URL; PostgreSQL probes are skipped without it")
    parser.add_argument("--redis-url", help="a Redis database for the buffer (its keys are searched for markers)")
    parser.add_argument("--latency-memories", type=int, default=10_000)
    parser.add_argument("--load-threads", type=int, default=4, help="concurrent searchers in the loaded phase")
    parser.add_argument("--uncapped", action="store_true", help="also time two 32 KB keyword searches of every word")
    parser.add_argument(
        "--only", help="comma-separated probes: isolation,erasure,bad_input,concurrent_learns,kill9,search_latency"
    )
    parser.add_argument("--out", default="benchmarks/results/reliability.json")
    options = parser.parse_args(args)
    only = set(options.only.split(",")) if options.only else None
    results = run(
        options.postgres_admin_url,
        options.redis_url,
        latency_memories=options.latency_memories,
        only=only,
        load_threads=options.load_threads,
        uncapped=options.uncapped,
    )
    out = Path(options.out)
    if only is not None and out.exists():  # a partial run replaces only the probes it ran
        merged = json.loads(out.read_text())
        for kind, probes in results.items():
            if kind in ("sqlite", "postgres"):
                merged.setdefault(kind, {}).update(probes)
        results = merged
    results["machine"] = machine_info()
    results["command"] = "python -m memstrata_bench.reliability " + " ".join(args)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

__all__ = ["main", "run"]
