"""LongMemEval turn recall@10 with consolidation off and on, in one run.

    python -m memstrata_bench.longmemeval_consolidation ../shared/data/longmemeval/longmemeval_s_dev100.json.gz \
        --out benchmarks/results/longmemeval-consolidation.json

Each question's haystack (every turn of every session, as an episode dated by its session) goes into
a fresh store; the question is searched (hybrid, k=10) with consolidation off, after `consolidate()`
with the default policy ("on": facts, events and notes, grouped by topic; episodes are kept),
and after the episodes are compressed too ("episodes_on": topic grouping, groups of at most 20).
A summary in the ranking stands for the turns it replaced, in order, and the ranking is cut at
10 turns, so a summary never counts for more than the 10 places it takes. Metrics are the paper's
at turn granularity (a turn is evidence when `has_answer` is true): recall_any@10 and
recall_all@10; abstention questions are left out.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata import ConsolidationOptions, Memory, MemoryKind, NewMemory, Scope

K = 10
MAX_TURN_CHARS = 16_000
"""Longer turns (pasted documents) are cut to fit the memory size limit."""


def parse_date(text: str) -> datetime:
    return datetime.strptime(text.split(" (")[0] + text.split(")")[-1], "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def load_haystack(memory: Memory, question: dict[str, Any]) -> tuple[dict[str, int], set[int]]:
    """Store every turn; returns memory id -> turn number, and the evidence turn numbers."""
    items, evidence, number = [], set(), 0
    for sid, date, session in zip(
        question["haystack_session_ids"], question["haystack_dates"], question["haystack_sessions"], strict=True
    ):
        for turn in session:
            if turn.get("has_answer"):
                evidence.add(number)
            items.append(
                NewMemory(
                    content=(turn["content"] or "(empty)")[:MAX_TURN_CHARS],
                    kind=MemoryKind.EPISODE,
                    created_at=parse_date(date),
                    metadata={"role": turn["role"], "turn": number},
                    scope=Scope("u", session_id=sid),
                )
            )
            number += 1
    ids: dict[str, int] = {}
    for start in range(0, len(items), 256):
        for record in memory.add_many(items[start : start + 256], scope=Scope("u"), dedupe=False):
            ids[record.id] = record.metadata["turn"]
    return ids, evidence


def ranked_turns(memory: Memory, question: str, turns: dict[str, int]) -> list[int]:
    """Top-K turn numbers; a summary stands for the turns it replaced."""
    found: list[int] = []
    for hit in memory.search(question, scope="u", k=K):
        replaced = hit.memory.metadata.get("replaces")
        for memory_id in replaced if isinstance(replaced, list) else [hit.memory.id]:
            if memory_id in turns and turns[memory_id] not in found:
                found.append(turns[memory_id])
    return found[:K]


def scores(found: list[int], evidence: set[int]) -> dict[str, float]:
    hits = evidence & set(found)
    return {"recall_any": float(bool(hits)), "recall_all": float(hits == evidence)}


def run_question(question: dict[str, Any], embedder: str) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(store=f"sqlite:///{Path(tmp) / 'q.db'}", embedder=embedder, track_access=False) as memory,
    ):
        turns, evidence = load_haystack(memory, question)
        off = scores(ranked_turns(memory, question["question"], turns), evidence)
        report = memory.consolidate(scope="u")  # the default policy
        on = scores(ranked_turns(memory, question["question"], turns), evidence)
        episodes = memory.consolidate(
            scope="u", options=ConsolidationOptions(kinds=(MemoryKind.EPISODE,))
        )  # turns compressed too, by topic
        turns_on = scores(ranked_turns(memory, question["question"], turns), evidence)
    return {
        "id": question["question_id"],
        "type": question["question_type"],
        "off": off,
        "on": on,
        "episodes_on": turns_on,
        "compressed": report.compressed,
        "episodes_compressed": episodes.compressed,
        "summaries": len(episodes.summaries),
        "turns": len(turns),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="longmemeval_s_dev100.json.gz")
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--limit", type=int, default=0, help="first N questions only (0: all)")
    parser.add_argument("--out", default="benchmarks/results/longmemeval-consolidation.json")
    args = parser.parse_args(argv)
    with gzip.open(args.data) as raw:
        questions = [q for q in json.load(raw) if not q["question_id"].endswith("_abs")]
    questions = questions[: args.limit] if args.limit else questions
    started = time.perf_counter()
    rows = []
    for index, question in enumerate(questions):
        rows.append(run_question(question, args.embedder))
        print(f"{index + 1}/{len(questions)}", file=sys.stderr, end="\r")
    summary = {
        f"{metric}@{K}_{side}": round(statistics.fmean(r[side][metric] for r in rows), 4)
        for side in ("off", "on", "episodes_on")
        for metric in ("recall_any", "recall_all")
    }
    result = {
        "benchmark": "longmemeval-consolidation",
        "data": Path(args.data).name,
        "questions": len(rows),
        "embedder": args.embedder,
        "window": "topic",
        **summary,
        "compressed_share": round(sum(r["compressed"] for r in rows) / sum(r["turns"] for r in rows), 4),
        "episodes_compressed_share": round(
            sum(r["episodes_compressed"] for r in rows) / sum(r["turns"] for r in rows), 4
        ),
        "summaries_per_question": statistics.median(r["summaries"] for r in rows),
        "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
