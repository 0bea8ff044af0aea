"""`memstrata bench encryption`: the cost of the encrypted SQLite store (SQLCipher) against the plain one,
measured in one run, and proof that retrieval is unchanged.

* LoCoMo (`bench locomo`, turns, hybrid) on both stores: recall@k must be identical.
* `bench latency` at one size on both stores, `rounds` times in alternating order (plain, encrypted,
  encrypted, plain, ...) so drift on a shared machine hits both alike: search p95 and add throughput,
  medians over rounds, and the encrypted/plain ratios.

The encrypted runs set `MEMSTRATA_STORE_KEY` for the duration of each run (the way a deployment turns
encryption on), so every store the benchmark opens is a SQLCipher file.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import latency, locomo

BENCH_KEY = "memstrata benchmark key"
TIMED = ("search_ms_p50", "search_ms_p95", "search_no_embed_ms_p95", "add_per_s", "add_one_ms_p50", "load_per_s")


@contextmanager
def store_key(key: str | None) -> Iterator[None]:
    previous = os.environ.pop("MEMSTRATA_STORE_KEY", None)
    if key is not None:
        os.environ["MEMSTRATA_STORE_KEY"] = key
    try:
        yield
    finally:
        os.environ.pop("MEMSTRATA_STORE_KEY", None)
        if previous is not None:
            os.environ["MEMSTRATA_STORE_KEY"] = previous


def alternating(rounds: int) -> list[bool]:
    """Encrypted? per run: plain, encrypted, encrypted, plain, plain, encrypted ... (pure)."""
    return [(i % 2 == 1) != (i // 2 % 2 == 1) for i in range(2 * rounds)]


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {name: round(statistics.median(r[name] for r in runs), 3) for name in TIMED}


def run(data: str | Path | None, *, memories: int, queries: int, rounds: int, embedder: str | None) -> dict[str, Any]:
    recall: dict[str, Any] = {}
    if data is not None:
        for label, key in (("plain", None), ("encrypted", BENCH_KEY)):
            with store_key(key):
                recall[label] = locomo.run(data, store="sqlite", embedder=embedder)["overall"]
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "encrypted": []}
    config = latency.LatencyConfig(memories=memories, users=1, queries=queries, context_queries=10)
    for encrypted in alternating(rounds):
        with store_key(BENCH_KEY if encrypted else None):
            result = latency.run(config, store="sqlite", embedder=embedder)
        runs["encrypted" if encrypted else "plain"].append({name: result[name] for name in TIMED})
    plain, encrypted_medians = _medians(runs["plain"]), _medians(runs["encrypted"])
    return {
        "benchmark": "encryption",
        "store": "sqlite",
        "memories": memories,
        "queries": queries,
        "rounds": rounds,
        "embedder": embedder or "static",
        "recall": recall,
        "recall_identical": bool(recall) and recall.get("plain") == recall.get("encrypted"),
        "plain": plain,
        "encrypted": encrypted_medians,
        "ratio_encrypted_over_plain": {
            name: round(encrypted_medians[name] / plain[name], 3) if plain[name] else None for name in TIMED
        },
        "runs": runs,
        "source": latency.source_revision(),
    }
