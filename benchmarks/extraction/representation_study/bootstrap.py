"""How sure is a difference in ranking quality? A paired bootstrap over turns of the out-of-fold AUC
and average precision among the clauses within reach, each representation against the shipped one.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/extraction/representation_study/bootstrap.py \
        benchmarks/results/s8 --out benchmarks/results/s8/representation-bootstrap.json

The out-of-fold probabilities are recomputed (the trainer's `out_of_fold`) at the L2 strength each
representation's study file chose. A replicate draws the labelled turns with replacement (a turn's
clauses stay together, as a conversation's turns are not independent either, this still understates
the spread somewhat) and scores every representation on the same draw.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # noqa: E402
import ranking  # noqa: E402
import representations  # noqa: E402

from memstrata.bench import train_disclosure as trainer  # noqa: E402

REPLICATES = 1000
BASELINE = "static_mean"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    chosen = {}
    for path in sorted(args.folder.glob("representation-study-*.json")):
        for name, result in json.loads(path.read_text(encoding="utf-8"))["representations"].items():
            chosen[name] = result["l2"]
    d = data.load()
    within = np.array(d.within_reach)
    units = [u for u, keep in zip(d.units, within, strict=True) if keep]
    labels = np.array([u.positive for u in units], dtype=bool)
    probabilities = {
        name: trainer.out_of_fold(representations.design(name, d.units, d.messages), d.units, l2)[within]
        for name, l2 in chosen.items()
    }
    turns = sorted({u.turn for u in units})
    rows_of = {turn: [] for turn in turns}
    for index, unit in enumerate(units):
        rows_of[unit.turn].append(index)
    rng = np.random.default_rng(0)
    draws: dict[str, dict[str, list[float]]] = {name: {"auc": [], "ap": []} for name in chosen}
    for _ in range(REPLICATES):
        picked = rng.choice(len(turns), size=len(turns), replace=True)
        rows = np.concatenate([rows_of[turns[i]] for i in picked])
        for name, p in probabilities.items():
            draws[name]["auc"].append(ranking.auc(p[rows], labels[rows]))
            draws[name]["ap"].append(ranking.average_precision(p[rows], labels[rows]))
    result = {
        "replicates": REPLICATES,
        "within_reach_clauses": len(units),
        "baseline": BASELINE,
        "against_baseline": {},
    }
    for name in chosen:
        entry = {}
        for measure in ("auc", "ap"):
            difference = np.array(draws[name][measure]) - np.array(draws[BASELINE][measure])
            entry[measure] = {
                "difference_median": round(float(np.median(difference)), 4),
                "interval_95": [round(float(q), 4) for q in np.percentile(difference, [2.5, 97.5])],
                "share_above_zero": round(float((difference > 0).mean()), 3),
            }
        result["against_baseline"][name] = entry
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result["against_baseline"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
