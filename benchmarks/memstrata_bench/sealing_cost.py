"""`python -m memstrata_bench.sealing_cost`: what sealing (crypto-shredding, docs/privacy.md) costs the
PostgreSQL store, measured paired.

A plain store, a sealed one and a sealed one that keeps no opened payloads (`opened_cache_size=0`; on code
without that cache it is a second sealed store) are open in one process, each on its own throwaway
database, and get the same synthetic corpus (`bench latency`'s generator). Every operation runs on all three
back to back, the order rotating from one operation to the next, so drift of a shared machine's load hits
them alike, operation by operation, instead of run by run:

1. **load**: the corpus through `Memory.add_many` in batches of `BATCH` (`dedupe=False`);
2. **search**: `queries` hybrid `Memory.search` calls (k=10), then the store's own read of each
   (`Store.hybrid_candidates`, top 50 per side, no embedding and no ranking);
3. **add**: `batches` more `add_many` batches of `BATCH` fresh memories (`dedupe=True`, as `bench latency`).

Per store and step it reports wall time (memories/s; p50/p95 ms), this process's CPU per operation
(`time.process_time`) and the database server's CPU per operation (user + system time of the store's
backends, read from `/proc`; 0 when the server runs elsewhere). On a loaded machine wall time swings with
everyone else's work, CPU time much less: the CPU ratio is the steadier estimate of what sealing adds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from memstrata import NewMemory, Scope

from . import latency
from .encryption import BENCH_MASTER_KEY
from .report import latency_summary, write_result

BATCH = 256
STORES = ("plain", "sealed", "sealed_uncached")
USER = "bench-user"
Operation = tuple[str, Callable[[], object]]


def interleaved(index: int, make: Callable[[str], Callable[[], object]]) -> list[Operation]:
    """The operation for every store, the order rotated by `index` (pure)."""
    start = index % len(STORES)
    return [(store, make(store)) for store in STORES[start:] + STORES[:start]]


def summary(
    step: str, seconds: Sequence[float], client_s: float, server_s: float, *, per: int | None
) -> dict[str, float]:
    """One store's figures of one step (pure): throughput when each operation handles `per` memories,
    else latency percentiles; CPU per operation in ms."""
    figures = (
        {f"{step}_per_s": round(per / statistics.median(seconds), 1)}
        if per
        else latency_summary([s * 1000 for s in seconds], f"{step}_ms")
    )
    return {
        **figures,
        f"{step}_client_cpu_ms": round(client_s / len(seconds) * 1000, 3),
        f"{step}_server_cpu_ms": round(server_s / len(seconds) * 1000, 3),
    }


def ratios(plain: Mapping[str, float], sealed: Mapping[str, float]) -> dict[str, float | None]:
    """sealed / plain for every figure, and for each step's CPU (client + server) per operation (pure)."""
    out: dict[str, float | None] = {k: round(sealed[k] / v, 3) if v else None for k, v in plain.items()}
    for step in {k.split("_client_cpu_ms")[0] for k in plain if k.endswith("_client_cpu_ms")}:
        cpu = [d[f"{step}_client_cpu_ms"] + d[f"{step}_server_cpu_ms"] for d in (plain, sealed)]
        out[f"{step}_cpu_ms"] = round(cpu[1] / cpu[0], 3) if cpu[0] else None
    return out


def backend_cpu_seconds(admin: Any, database: str) -> float:
    """User + system CPU seconds of the server processes connected to `database` (0 for those /proc cannot
    show: another machine, or a backend that just ended)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for (pid,) in admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [database]).fetchall():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def run(*, memories: int, queries: int, batches: int, seed: int = 11) -> dict[str, Any]:
    import psycopg

    from memstrata import Memory
    from memstrata.embedders.registry import resolve_embedder
    from memstrata.storage.base import MemoryFilter
    from memstrata.storage.crypto import LocalKeyProvider
    from memstrata.storage.postgres import PostgresStore

    rng = np.random.default_rng(seed)
    words = latency.model_vocabulary()
    weights = latency.zipf_weights(len(words))
    embedder = resolve_embedder("static")
    corpus = latency.synthetic_texts(rng, words, weights, memories)
    scope = Scope(user_id=USER)
    steps: dict[str, dict[str, float]] = {store: {} for store in STORES}
    with ExitStack() as stack, psycopg.connect(latency.admin_url(), autocommit=True) as admin:
        memory, database, targets = {}, {}, {}
        for store in STORES:
            app, owner = stack.enter_context(latency.throwaway_postgres())
            provider = None if store == "plain" else LocalKeyProvider.from_text(BENCH_MASTER_KEY, source="bench")
            options = {"opened_cache_size": 0} if store == "sealed_uncached" and _has_opened_cache() else {}
            opened = PostgresStore.open(app, owner_url=owner, key_provider=provider, **options)
            memory[store] = stack.enter_context(Memory(store=opened, embedder=embedder))
            database[store] = app.rsplit("/", 1)[1]
            targets[store] = latency.BenchStore("postgres", app, owner_url=owner)

        def timed(step: str, operations: list[Operation], per: int | None) -> None:
            seconds: dict[str, list[float]] = {store: [] for store in STORES}
            client = dict.fromkeys(STORES, 0.0)
            before = {store: backend_cpu_seconds(admin, database[store]) for store in STORES}
            for store, operation in operations:
                cpu, started = time.process_time(), time.perf_counter()
                operation()
                seconds[store].append(time.perf_counter() - started)
                client[store] += time.process_time() - cpu
            for store in STORES:
                server = backend_cpu_seconds(admin, database[store]) - before[store]
                steps[store] |= summary(step, seconds[store], client[store], server, per=per)

        def add(texts: list[str], dedupe: bool) -> Callable[[str], Callable[[], object]]:
            batch = [NewMemory(content=t) for t in texts]
            return lambda store: lambda: memory[store].add_many(batch, scope=scope, dedupe=dedupe)

        chunks = [corpus[i : i + BATCH] for i in range(0, memories, BATCH)]
        timed("load", [op for i, chunk in enumerate(chunks) for op in interleaved(i, add(chunk, False))], BATCH)
        for store in STORES:
            latency.analyze(targets[store])  # planner statistics, as autovacuum soon would
        asked = [latency.make_query(rng, corpus[int(i)], words) for i in rng.integers(0, memories, queries + 10)]
        for query in asked[:10]:  # warm both stores' caches
            for store in STORES:
                memory[store].search(query, scope=scope, k=10)
        asked = asked[10:]
        vectors = [embedder.embed_query(query) for query in asked]

        def search(query: str) -> Callable[[str], Callable[[], object]]:
            return lambda store: lambda: memory[store].search(query, scope=scope, k=10)

        def read(query: str, vector: Any) -> Callable[[str], Callable[[], object]]:
            return lambda store: (
                lambda: memory[store].store.hybrid_candidates(USER, vector, query, MemoryFilter(), limit=50)
            )

        timed("search", [op for i, q in enumerate(asked) for op in interleaved(i, search(q))], None)
        timed(
            "store_hybrid",
            [op for i, (q, v) in enumerate(zip(asked, vectors, strict=True)) for op in interleaved(i, read(q, v))],
            None,
        )
        fresh = [latency.synthetic_texts(rng, words, weights, BATCH) for _ in range(batches)]
        timed("add", [op for i, texts in enumerate(fresh) for op in interleaved(i, add(texts, True))], BATCH)
        cache = getattr(getattr(memory["sealed"].store, "_keys", None), "opened", None)
        opened_cache = {"hits": cache.hits, "misses": cache.misses} if cache is not None else None
    return {
        "benchmark": "sealing_cost",
        "opened_cache": opened_cache,
        "memories": memories,
        "queries": queries,
        "batches": batches,
        "seed": seed,
        "plain": steps["plain"],
        "sealed": steps["sealed"],
        "sealed_uncached": steps["sealed_uncached"],
        "ratio_sealed_over_plain": ratios(steps["plain"], steps["sealed"]),
        "ratio_sealed_uncached_over_plain": ratios(steps["plain"], steps["sealed_uncached"]),
        "load_average": list(os.getloadavg()),
        "source": latency.source_revision(),
    }


def _has_opened_cache() -> bool:
    """Whether this code's PostgreSQL store keeps opened payloads (it did not always)."""
    import inspect

    from memstrata.storage.postgres import PostgresStore

    return "opened_cache_size" in inspect.signature(PostgresStore.open).parameters


def main(argv: Iterator[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memstrata_bench.sealing_cost", description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=5000, help="corpus size per store (default 5,000)")
    parser.add_argument("--queries", type=int, default=200, help="searches per store (default 200)")
    parser.add_argument("--batches", type=int, default=8, help=f"add_many batches of {BATCH} per store (default 8)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", default="benchmarks/results", help="result directory")
    parser.add_argument("--name", default="sealing-cost", help="result file name (without .json)")
    args = parser.parse_args(None if argv is None else list(argv))
    result = run(memories=args.memories, queries=args.queries, batches=args.batches, seed=args.seed)
    print(write_result(args.out, args.name, result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
