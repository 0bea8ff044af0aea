"""Latency of the PostgreSQL store on a synthetic corpus (not a test; run by hand).

    python -m tests.postgres.measure [--big 10000] [--small-users 200] [--small-rows 50] [--dims 384]

Creates a throwaway database (tests/support/pg.py), loads one big tenant and many small ones with
clustered unit vectors and Zipf-distributed pseudo-words, and times the store's methods as the
NON-superuser application role. Medians and 95th percentiles in milliseconds go to
benchmarks/results/postgres_store.json. The machine is shared: read ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from memstrata.models import MemoryKind, Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.migrations import index_existing_memories
from tests.support.pg import connect_admin, database_of, postgres_urls

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "postgres_store.json"
BIG = "big"


def corpus(rng: np.random.Generator, n: int, dims: int, centroids: np.ndarray) -> tuple[np.ndarray, list[str]]:
    picks = rng.integers(0, len(centroids), n)
    vectors = centroids[picks] + rng.normal(0, 0.35, (n, dims)).astype(np.float32) / np.sqrt(dims)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = rng.zipf(1.3, (n, 8)) % 3000
    texts = [" ".join(f"w{w}" for w in row) for row in words]
    return vectors.astype(np.float32), texts


def load(
    conn: psycopg.Connection[Any], user: str, vectors: np.ndarray, texts: list[str], rng: np.random.Generator
) -> None:
    columns = "user_id, id, kind, content, created_at, updated_at, valid_from, content_hash, embedding"
    with conn.cursor().copy(f"COPY memories ({columns}) FROM STDIN") as copy:
        for i, (vector, text) in enumerate(zip(vectors, texts, strict=True)):
            kind = "note" if rng.random() < 0.05 else "fact"
            stamp = "2026-01-01 00:00:00+00"
            copy.write_row(
                (
                    user,
                    f"{user}-{i}",
                    kind,
                    text,
                    stamp,
                    stamp,
                    stamp,
                    f"h{i}",
                    "[" + ",".join(map(str, vector)) + "]",
                )
            )


def timed(fn: Callable[[int], object], runs: int) -> dict[str, float]:
    fn(0)  # warm-up
    samples = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
    }


def recall(store: PostgresStore, matrix: np.ndarray, ids: list[str], queries: np.ndarray) -> float:
    hits = []
    for query in queries:
        exact = {ids[i] for i in np.argsort(-(matrix @ query))[:10]}
        found = {r.record.id for r in store.vector_search(BIG, query, MemoryFilter(), limit=10)}
        hits.append(len(exact & found) / 10)
    return round(float(np.mean(hits)), 3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument("--small-users", type=int, default=200)
    parser.add_argument("--small-rows", type=int, default=50)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    centroids = rng.normal(0, 1, (300, args.dims)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    out: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, shared"}
    out["corpus"] = vars(args)
    with postgres_urls() as (app_url, owner_url):
        start = time.perf_counter()
        store = PostgresStore.open(app_url, owner_url=owner_url)
        out["open_first_ms"] = round((time.perf_counter() - start) * 1000, 1)
        big_vectors, big_texts = corpus(rng, args.big, args.dims, centroids)
        start = time.perf_counter()
        with connect_admin(database_of(app_url)) as admin:
            load(admin, BIG, big_vectors, big_texts, rng)
            for u in range(args.small_users):
                vectors, texts = corpus(rng, args.small_rows, args.dims, centroids)
                load(admin, f"user{u}", vectors, texts, rng)
        out["copy_load_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        store.bind_embedder("synthetic", args.dims)
        out["hnsw_build_s"] = round(time.perf_counter() - start, 2)
        with psycopg.connect(owner_url) as owner, owner.cursor() as cur:  # rows copied in get their terms
            index_existing_memories(cur)
        with connect_admin(database_of(app_url)) as admin:
            admin.execute("ANALYZE")
        start = time.perf_counter()
        PostgresStore.open(app_url, owner_url=owner_url).close()
        out["open_again_ms"] = round((time.perf_counter() - start) * 1000, 1)

        queries = corpus(rng, args.runs + 1, args.dims, centroids)[0]
        ids = [f"{BIG}-{i}" for i in range(args.big)]
        notes = MemoryFilter(kinds=(MemoryKind.NOTE,))
        small = lambda i: f"user{i % args.small_users}"  # noqa: E731
        words = [f"w{n}" for n in range(20, 60)]
        ops: dict[str, Callable[[int], object]] = {
            "vector_small_tenant": lambda i: store.vector_search(small(i), queries[i], MemoryFilter(), limit=10),
            "vector_big_tenant": lambda i: store.vector_search(BIG, queries[i], MemoryFilter(), limit=10),
            "vector_big_tenant_5pct_filter": lambda i: store.vector_search(BIG, queries[i], notes, limit=10),
            "keyword_small_tenant": lambda i: store.keyword_search(
                small(i), f"{words[i % 40]} w3", MemoryFilter(), limit=10
            ),
            "keyword_big_tenant": lambda i: store.keyword_search(BIG, f"{words[i % 40]} w3", MemoryFilter(), limit=10),
            "keyword_big_tenant_rare_words": lambda i: store.keyword_search(
                BIG, f"w{1000 + i} w{2000 + i}", MemoryFilter(), limit=10
            ),
            "list_small_tenant_20": lambda i: store.list_memories(small(i), MemoryFilter(), limit=20),
            "get_one": lambda i: store.get(BIG, [ids[i]]),
        }

        def naive_keyword(i: int) -> None:  # the same search, directly on the table under RLS
            with store.transaction(BIG) as cur:
                cur.execute(
                    "SELECT id FROM memories WHERE user_id = %s AND keyword_terms && %s::text[] LIMIT 10",
                    [BIG, [words[i % 40], "w3"]],
                )
                cur.fetchall()

        def rpc(query: str) -> Callable[[int], None]:
            def run(i: int) -> None:
                with store.transaction(BIG) as cur:
                    cur.execute(query, [queries[i]])
                    cur.fetchall()

            return run

        ops["keyword_big_tenant_direct_under_rls"] = naive_keyword
        ops["match_memories_big"] = rpc("SELECT * FROM match_memories(%s, 0.0, 10, 'big')")
        ops["hybrid_memory_search_big"] = rpc("SELECT * FROM hybrid_memory_search(ARRAY['w25', 'w3'], %s, 'big', 10)")
        ops["user_ids_1000"] = lambda i: store.user_ids(limit=1000)
        out["ops"] = {name: timed(fn, args.runs) for name, fn in ops.items()}

        def save_one(i: int) -> None:
            record = new_record(scope=Scope(BIG), content=f"fresh memory number {i} about w{i}")
            store.save(BIG, [record], [], queries[i : i + 1])

        # before the saves below, which add rows outside the exact ground truth
        out["recall_at_10_big"] = {"ef_search_40": recall(store, big_vectors, ids, queries[:50])}
        with PostgresStore.open(app_url, ef_search=100) as wide:
            out["recall_at_10_big"]["ef_search_100"] = recall(wide, big_vectors, ids, queries[:50])
        out["ops"]["save_one_with_vector_big"] = timed(save_one, 50)
        start = time.perf_counter()
        counts = store.erase_user("user0")
        out["erase_small_user_ms"] = round((time.perf_counter() - start) * 1000, 1)
        out["erase_counts"] = counts
        store.close()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
