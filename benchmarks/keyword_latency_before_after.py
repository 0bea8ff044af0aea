"""Keyword search latency of one big SQLite user before and after a change, in one run.

    python benchmarks/keyword_latency_before_after.py BEFORE_SRC AFTER_SRC [--memories 30000] [--rounds 2] [--out FILE]

Each side (a source tree holding `memstrata/`) runs in a fresh subprocess: `--memories` seeded synthetic
memories (`bench latency`'s corpus) saved for one user straight into a `SQLiteStore` (no embedder: the
vector side is unchanged code and only adds noise), then 200 `keyword_search` calls timed (queries made
from the memories as `bench latency` makes them; 20 untimed first). Sides alternate round by round; the
load time is reported too. Above 5,000 memories the posting budget applies (`keyword_plan`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.tree_runs import alternate, run_probe, write_result  # noqa: E402

PROBE = """
import json, sys, tempfile, time
from pathlib import Path
import numpy as np
from memstrata.bench.latency import make_query, model_vocabulary, synthetic_texts, zipf_weights
from memstrata.bench.report import latency_summary
from memstrata.models import Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.sqlite import SQLiteStore
count = int(sys.argv[1])
rng = np.random.default_rng(7)
words = model_vocabulary()
texts = synthetic_texts(rng, words, zipf_weights(len(words)), count)
queries = [make_query(rng, texts[int(i)], words) for i in rng.integers(0, count, 220)]
with tempfile.TemporaryDirectory() as tmp:
    store = SQLiteStore(Path(tmp) / "k.db")
    records = [new_record(scope=Scope("big"), content=t) for t in texts]
    started = time.perf_counter()
    for start in range(0, count, 1000):
        store.save("big", records[start : start + 1000])
    load_s = time.perf_counter() - started
    times = []
    for number, query in enumerate(queries):
        started = time.perf_counter()
        store.keyword_search("big", query, MemoryFilter(), limit=50)
        if number >= 20:
            times.append((time.perf_counter() - started) * 1000)
    store.close()
print(json.dumps({"load_per_s": round(count / load_s, 1), **latency_summary(times, "keyword_ms")}))
"""


def timed(tree: Path, memories: int) -> dict:
    return run_probe(tree, PROBE, str(memories))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--memories", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    trees = {"before": options.before, "after": options.after}
    runs = alternate(options.rounds, trees, lambda tree: timed(tree, options.memories))
    keys = ("load_per_s", "keyword_ms_p50", "keyword_ms_p95", "keyword_ms_p99")
    summary = {side: {k: median(r[k] for r in rs) for k in keys} for side, rs in runs.items()}
    summary["p95_ratio_after_to_before"] = round(
        summary["after"]["keyword_ms_p95"] / summary["before"]["keyword_ms_p95"], 3
    )
    fields = {"memories": options.memories, "runs": runs, "summary": summary}
    write_result("keyword-latency-before-after", fields, "keyword_latency_before_after.py", options.out)


if __name__ == "__main__":
    main()
