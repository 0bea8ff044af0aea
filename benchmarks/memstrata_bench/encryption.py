"""`memstrata-bench encryption`: the cost of encryption at rest against the plain store, measured in one
run, and proof that retrieval is unchanged. `store="sqlite"`: the SQLCipher file; `store="postgres"`:
crypto-shredding (payloads sealed per user, keyword index as keyed-hash tokens) on a throwaway database.

* LoCoMo (`bench locomo`, turns, hybrid) on both stores: recall@k must be identical.
* `bench latency` at one size on both stores, `rounds` times in alternating order (plain, encrypted,
  encrypted, plain, ...) so drift on a shared machine hits both alike: search p95 and add throughput,
  medians over rounds, and the encrypted/plain ratios.

The encrypted runs set the store's key setting for the duration of each run (the way a deployment turns
encryption on): `MEMSTRATA_STORE_KEY` (every SQLite store the benchmark opens is a SQLCipher file) or
`MEMSTRATA_MASTER_KEY` (every PostgreSQL store seals its rows).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstrata import InvalidInput

from . import latency, locomo

BENCH_KEY = "memstrata benchmark key"
BENCH_MASTER_KEY = "6d656d7374726174612062656e63686d61726b206d6173746572206b65792121"
"""A fixed 32-byte master key (hex) for the PostgreSQL runs: benchmark data only, never a real key."""
KEY_SETTINGS = {"sqlite": ("MEMSTRATA_STORE_KEY", BENCH_KEY), "postgres": ("MEMSTRATA_MASTER_KEY", BENCH_MASTER_KEY)}
TIMED = (
    "search_ms_p50",
    "search_ms_p95",
    "search_no_embed_ms_p95",
    "add_per_s",
    "add_one_ms_p50",
    "load_per_s",
    "store_vector_ms_p50",
    "store_vector_ms_p95",
    "store_keyword_ms_p50",
    "store_keyword_ms_p95",
    "store_hybrid_ms_p50",
    "store_hybrid_ms_p95",
)
"""Medians over runs of these `bench latency` figures; `store_*` time the store's reads alone (no embedding,
no ranking), where the sealed store's extra work (opening payloads, hashing query terms) shows undiluted."""


@contextmanager
def store_key(key: str | None, setting: str = "MEMSTRATA_STORE_KEY") -> Iterator[None]:
    previous = os.environ.pop(setting, None)
    if key is not None:
        os.environ[setting] = key
    try:
        yield
    finally:
        os.environ.pop(setting, None)
        if previous is not None:
            os.environ[setting] = previous


def alternating(rounds: int) -> list[bool]:
    """Encrypted? per run: plain, encrypted, encrypted, plain, plain, encrypted ... (pure)."""
    return [(i % 2 == 1) != (i // 2 % 2 == 1) for i in range(2 * rounds)]


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {name: round(statistics.median(r[name] for r in runs), 3) for name in TIMED}


def run(
    data: str | Path | None,
    *,
    memories: int,
    queries: int,
    rounds: int,
    embedder: str | None,
    store: str = "sqlite",
) -> dict[str, Any]:
    if store not in KEY_SETTINGS:
        raise InvalidInput(f"--store must be one of {', '.join(KEY_SETTINGS)}, got {store!r}")
    setting, bench_key = KEY_SETTINGS[store]
    recall: dict[str, Any] = {}
    if data is not None:
        for label, key in (("plain", None), ("encrypted", bench_key)):
            with store_key(key, setting):
                recall[label] = locomo.run(data, store=store, embedder=embedder)["overall"]
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "encrypted": []}
    config = latency.LatencyConfig(memories=memories, users=1, queries=queries, context_queries=10)
    for encrypted in alternating(rounds):
        with store_key(bench_key if encrypted else None, setting):
            result = latency.run(config, store=store, embedder=embedder)
        runs["encrypted" if encrypted else "plain"].append({name: result[name] for name in TIMED})
    plain, encrypted_medians = _medians(runs["plain"]), _medians(runs["encrypted"])
    return {
        "benchmark": "encryption",
        "store": store,
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
