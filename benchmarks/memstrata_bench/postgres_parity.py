"""`memstrata-bench parity` and `memstrata-bench bulkload`: PostgreSQL against SQLite, same data, one run.

* **parity**: LoCoMo conversations (and optionally LongMemEval haystacks) stored the same way in a
  temporary SQLite file and a throwaway PostgreSQL database; every question searched on both, keyword
  only and hybrid. Reports each store's recall@10 and how often the two top 10 agree (same memories
  in the same order; same set of memories). Two layouts: `shared` (every user in one store, as
  `bench locomo` / `bench longmemeval` store them; until SQLite's migration 4 its BM25 statistics then
  spanned all users, PostgreSQL's were per user; both are per user now) and `alone` (one user in the
  store at a time).
* **bulkload**: an existing database (`--existing` memories of 20 users, analyzed), then `--memories`
  memories of one new user loaded in batches of 1,000; search is timed right after the load, then once
  the tables are analyzed (steady state), each time with its own queries (made alike from the loaded
  memories). With `--no-auto-analyze` the store does not gather
  statistics after bulk writes (the behaviour before migration 9's store).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from memstrata import Memory, MemoryKind, NewMemory, Scope, Strategy

from . import locomo, longmemeval
from .latency import bench_store, make_query, model_vocabulary, open_postgres, synthetic_texts, zipf_weights
from .locomo_data import evidence_recall
from .locomo_data import load as load_locomo
from .longmemeval_data import load as load_longmemeval
from .longmemeval_data import score_case
from .report import latency_summary

Progress = Callable[[str], None]
K = 10
STRATEGIES = (Strategy.KEYWORD, Strategy.HYBRID)


@contextmanager
def _both(embedder: str) -> Iterator[tuple[Memory, Memory]]:
    with (
        bench_store("sqlite") as lite,
        bench_store("postgres") as pg,
        Memory(store=lite.url, embedder=embedder) as a,
        Memory(store=open_postgres(pg), embedder=embedder) as b,
    ):
        yield a, b


def agreement(first: Sequence[Sequence[str]], second: Sequence[Sequence[str]]) -> dict[str, float]:
    """Share of queries whose two top-k lists are equal (`same_order`), hold the same items
    (`same_set`), and the mean share of items in common (`overlap`) (pure)."""
    pairs = list(zip(first, second, strict=True))
    if not pairs:
        return {"same_order": 0.0, "same_set": 0.0, "overlap": 0.0}
    return {
        "same_order": round(statistics.fmean(a == b for a, b in pairs), 4),
        "same_set": round(statistics.fmean(set(a) == set(b) for a, b in pairs), 4),
        "overlap": round(statistics.fmean(len(set(a) & set(b)) / max(len(a), len(b), 1) for a, b in pairs), 4),
    }


def _locomo_searches(memory: Memory, conversation: Any, strategy: Strategy) -> list[list[str]]:
    scope = Scope(user_id=f"locomo-{conversation.sample_id}")
    return [
        [h.memory.source_ids[0] for h in memory.search(q.question, scope=scope, k=K, strategy=strategy)]
        for q in conversation.questions
    ]


def _locomo(memories: tuple[Memory, Memory], data: str, layout: str, progress: Progress | None) -> dict[str, Any]:
    conversations = load_locomo(data)
    ranked: dict[str, list[list[list[str]]]] = {f"{s.value}-{i}": [] for s in STRATEGIES for i in range(2)}
    evidence = [q.evidence for c in conversations for q in c.questions]
    for conversation in conversations:
        for memory in memories:
            if layout == "alone":
                for other in conversations:
                    memory.store.erase_user(f"locomo-{other.sample_id}")
            locomo.ingest(memory, conversation)
        if layout == "alone":
            _search_locomo(memories, conversation, ranked)
    if layout == "shared":
        for conversation in conversations:
            _search_locomo(memories, conversation, ranked)
    if progress:
        progress(f"locomo {layout}: {len(evidence)} questions on both stores")
    return _summary(
        ranked,
        lambda rows: statistics.fmean(
            evidence_recall(e, [(r,) for r in row], K) for e, row in zip(evidence, rows, strict=True)
        ),
    )


def _search_locomo(
    memories: tuple[Memory, Memory], conversation: Any, ranked: dict[str, list[list[list[str]]]]
) -> None:
    for strategy in STRATEGIES:
        for index, memory in enumerate(memories):
            ranked[f"{strategy.value}-{index}"].append(_locomo_searches(memory, conversation, strategy))


def _summary(ranked: dict[str, list[list[list[str]]]], recall: Callable[[list[list[str]]], float]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for strategy in STRATEGIES:
        lite = [row for rows in ranked[f"{strategy.value}-0"] for row in rows]
        pg = [row for rows in ranked[f"{strategy.value}-1"] for row in rows]
        out[strategy.value] = {
            "sqlite_recall@10": round(recall(lite), 4),
            "postgres_recall@10": round(recall(pg), 4),
            "agreement@10": agreement(lite, pg),
            "questions": len(lite),
        }
    return out


def _longmemeval(memories: tuple[Memory, Memory], data: str, limit: int, layout: str) -> dict[str, Any]:
    cases = load_longmemeval(data, limit=limit)
    ranked: dict[str, list[list[list[str]]]] = {f"{s.value}-{i}": [] for s in STRATEGIES for i in range(2)}
    for number, case in enumerate(cases):
        for memory in memories:
            if layout == "alone" and number:
                memory.store.erase_user(longmemeval.user_of(cases[number - 1]))
            longmemeval.ingest(memory, case, "turn")
        if layout == "alone":
            _search_longmemeval(memories, [case], ranked)
    if layout == "shared":
        _search_longmemeval(memories, cases, ranked)
    return _summary(
        ranked,
        lambda rows: statistics.fmean(score_case(c, row)["turn_recall@10"] for c, row in zip(cases, rows, strict=True)),
    )


def _search_longmemeval(
    memories: tuple[Memory, Memory], cases: list[Any], ranked: dict[str, list[list[list[str]]]]
) -> None:
    for strategy in STRATEGIES:
        for index, memory in enumerate(memories):
            rows = [longmemeval.search(memory, case, k=K, strategy=strategy) for case in cases]
            ranked[f"{strategy.value}-{index}"].append(rows)


def run_parity(
    locomo_data: str,
    *,
    longmemeval_data: str | None = None,
    limit: int = 30,
    embedder: str = "static",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Recall@10 of both stores and their top-10 agreement, per layout and benchmark."""
    result: dict[str, Any] = {"benchmark": "postgres-parity", "k": K, "embedder": embedder}
    for layout in ("alone", "shared"):
        with _both(embedder) as memories:
            result[f"locomo_{layout}"] = _locomo(memories, locomo_data, layout, progress)
        if longmemeval_data:
            with _both(embedder) as memories:
                result[f"longmemeval_{layout}"] = _longmemeval(memories, longmemeval_data, limit, layout)
                result["longmemeval_questions"] = limit
            if progress:
                progress(f"longmemeval {layout}: done")
    return result


# -- bulk load, then search ----------------------------------------------------------------------------
def _timed_searches(memory: Memory, user: str, queries: list[str]) -> dict[str, float]:
    for query in queries[:10]:
        memory.search(query, scope=user, k=K)
    times = []
    for query in queries[10:]:
        started = time.perf_counter()
        memory.search(query, scope=user, k=K)
        times.append((time.perf_counter() - started) * 1000)
    return latency_summary(times, "search_ms")


def _analyze(owner_url: str) -> None:
    import psycopg

    with psycopg.connect(owner_url, autocommit=True) as conn:
        for table in ("memories", "history", "keyword_documents", "keyword_postings"):
            conn.execute(f"ANALYZE {table}")


def run_bulkload(
    *,
    memories: int = 20_000,
    existing: int = 2_000,
    queries: int = 200,
    auto_analyze: bool = True,
    embedder: str = "static",
    seed: int = 11,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Search p50/p95 right after a bulk load into an existing database, and in steady state."""
    rng = np.random.default_rng(seed)
    words = model_vocabulary()
    weights = zipf_weights(len(words))
    with bench_store("postgres") as target, Memory(store=open_postgres(target), embedder=embedder) as memory:
        planner = getattr(memory.store, "planner_statistics", None)
        if planner is not None and not auto_analyze:
            planner.enabled = False  # the store as it was: no statistics after bulk writes
        for index in range(20):
            texts = synthetic_texts(rng, words, weights, existing // 20)
            memory.add_many(
                [NewMemory(content=t, kind=MemoryKind.FACT) for t in texts], scope=f"earlier-{index}", dedupe=False
            )
        assert target.owner_url is not None
        _analyze(target.owner_url)
        analyzed_before = getattr(planner, "analyzed", 0)
        texts = synthetic_texts(rng, words, weights, memories)
        started = time.perf_counter()
        for start in range(0, memories, 1000):
            items = [NewMemory(content=t, kind=MemoryKind.FACT) for t in texts[start : start + 1000]]
            memory.add_many(items, scope="importer", dedupe=False)
        load_s = time.perf_counter() - started
        picks = rng.choice(memories, size=2 * (queries + 10), replace=False)
        asked = [make_query(rng, texts[i], words) for i in picks]
        if progress:
            progress(f"loaded {memories} memories in {load_s:.1f} s; searching")
        # two disjoint query sets of one distribution: the second pass does not find the pages of its
        # memories cached by the first one
        after_load = _timed_searches(memory, "importer", asked[: queries + 10])
        _analyze(target.owner_url)
        steady = _timed_searches(memory, "importer", asked[queries + 10 :])
    return {
        "benchmark": "postgres-bulkload",
        "memories": memories,
        "existing": existing,
        "queries": queries,
        "auto_analyze": auto_analyze,
        "store_analyzed_during_load": getattr(planner, "analyzed", 0) - analyzed_before,
        "load_s": round(load_s, 2),
        "after_load": after_load,
        "steady": steady,
        "p95_ratio": round(after_load["search_ms_p95"] / steady["search_ms_p95"], 3),
    }


def write(result: dict[str, Any], out: str | None, name: str) -> None:
    from .report import write_result

    if out:
        write_result(Path(out), name, result)
