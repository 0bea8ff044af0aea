"""Which clause representation ranks store-worthy clauses best? Out-of-fold comparison on exactly the
trainer's units, labels, weights and grouped folds (`memstrata.bench.train_disclosure`).

    cd <worktree> && PYTHONPATH=$PWD .venv/bin/python benchmarks/extraction/representation_study/study.py \
        --out benchmarks/results/s8/representation-study.json

For each representation (`representations.VECTORS`): the L2 strength with the lowest grouped-CV
weighted log-loss (the trainer's criterion, on its grid and two stronger values), then with it the
out-of-fold probabilities, their AUC and average precision over all clauses, over the clauses within
reach (`learned.out_of_reach` false) and over the clauses the learned path actually asks about (within
reach, open, not kept by the general path, in a message that asks the assistant nothing); the recall
of store-worthy clauses at precision 0.90 / 0.85 / 0.80 among them; and the real extractor's recall
and precision run with those probabilities (`end_to_end`). A learning curve (AUC with part of the
training turns) is run for `--curve`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # noqa: E402  (puts the repository on the path)
import end_to_end  # noqa: E402
import ranking  # noqa: E402
import representations  # noqa: E402

from memstrata.bench import extraction_realistic as realistic  # noqa: E402
from memstrata.bench import train_disclosure as trainer  # noqa: E402
from memstrata.bench.extraction_judged import load_judgments  # noqa: E402

L2_GRID = (*trainer.L2_GRID, 1000.0, 3000.0)
PRECISIONS = (0.90, 0.85, 0.80)
SCORE_KEYS = ("recall", "covered", "memories", "correct", "unjudged", "precision", "precision_pessimistic")
"""What the JSON keeps of the bench's score: `precision` counts judged memories only, `precision_pessimistic`
counts an unjudged one as wrong."""
FRACTIONS = (0.5, 0.75, 1.0)
SEEDS = (0, 1, 2)


def arrays(units: list[trainer.Unit]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.array([u.fold for u in units]),
        np.array([u.positive for u in units], dtype=np.float64),
        np.array([u.weight for u in units]),
    )


def choose_l2(rows: np.ndarray, units: list[trainer.Unit]) -> tuple[float, dict[str, float]]:
    """The trainer's rule: the L2 strength with the lowest out-of-fold weighted log-loss (ties: the
    stronger)."""
    _, labels, weights = arrays(units)
    losses = {l2: trainer.log_loss(trainer.out_of_fold(rows, units, l2), labels, weights) for l2 in L2_GRID}
    best = min(losses, key=lambda value: (losses[value], -value))
    return best, {str(k): round(v, 4) for k, v in losses.items()}


def ranking_quality(p: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    return {
        "clauses": len(labels),
        "positives": int(labels.sum()),
        "auc": round(ranking.auc(p, labels), 4),
        "average_precision": round(ranking.average_precision(p, labels), 4),
        "recall_at_precision": {str(least): ranking.recall_at_precision(p, labels, least) for least in PRECISIONS},
    }


def learning_curve(rows: np.ndarray, units: list[trainer.Unit], l2: float, within: np.ndarray) -> dict[str, Any]:
    """Out-of-fold AUC when each fold's model sees only a random share of the other folds' turns
    (whole turns, `SEEDS` draws per share; the L2 strength fixed at the full-data choice)."""
    folds, labels, weights = arrays(units)
    turns = np.array([u.turn for u in units])
    curve = {}
    for fraction in FRACTIONS:
        aucs, within_aucs = [], []
        for seed in SEEDS if fraction < 1 else SEEDS[:1]:
            rng = np.random.default_rng(seed)
            p = np.zeros(len(units))
            for fold in range(trainer.FOLDS):
                test = folds == fold
                pool = sorted(set(turns[~test]))
                kept = set(rng.choice(pool, size=round(fraction * len(pool)), replace=False))
                train = ~test & np.isin(turns, list(kept))
                model = trainer.fit(rows[train], labels[train], weights[train], l2)
                p[test] = model.probabilities(rows[test])
            aucs.append(ranking.auc(p, labels))
            within_aucs.append(ranking.auc(p[within], labels[within]))
        curve[str(fraction)] = {
            "auc": round(float(np.mean(aucs)), 4),
            "auc_within_reach": round(float(np.mean(within_aucs)), 4),
            "draws": len(aucs),
        }
    return curve


def end_to_end_summary(table: dict[float, dict[str, Any]], rules_alone: dict[str, Any]) -> dict[str, Any]:
    floor = rules_alone["precision_pessimistic"] or 0.0
    chosen = trainer.choose(table, floor)
    return {
        "chosen_threshold": chosen,
        "chosen": {k: table[chosen][k] for k in SCORE_KEYS},
        "by_threshold": {str(t): {k: s[k] for k in SCORE_KEYS} for t, s in sorted(table.items())},
    }


def study(names: list[str], curve: list[str], skip_check: bool) -> dict[str, Any]:
    started = time.time()
    d = data.load()
    _, labels, _ = arrays(d.units)
    within = np.array(d.within_reach)
    judgments = load_judgments(realistic.LABELS_DIR / f"judgments-{realistic.NAME}.jsonl")
    rules_alone = trainer.system_score(
        [
            realistic.TurnResult(t, label, tuple(end_to_end.RuleExtractor(worthiness=None).extract([t.message()])))
            for t, label in d.labelled
        ],
        judgments,
    )
    out: dict[str, Any] = {
        "benchmark": "store-worthiness-representation-study",
        "labelled_by": realistic.LABELLED_BY,
        "splits": sorted({label.split for _, label in d.labelled}),
        "blind_excluded": sorted(trainer.BLIND),
        "turns": len(d.labelled),
        "clauses": len(d.units),
        "positive_clauses": int(labels.sum()),
        "forbid_negatives": sum(u.weight > 1 for u in d.units),
        "within_reach": {"clauses": int(within.sum()), "positives": int(labels[within].sum())},
        "rules_alone": {k: rules_alone[k] for k in ("items", *SCORE_KEYS)},
        "representations": {},
    }
    for name in names:
        t0 = time.time()
        rows = representations.design(name, d.units, d.messages)
        l2, losses = choose_l2(rows, d.units)
        p = trainer.out_of_fold(rows, d.units, l2)
        table, asked_pairs = end_to_end.cross_validate(d.labelled, d.units, p, judgments)
        asked = np.array([(u.turn, u.original) in asked_pairs for u in d.units])
        result: dict[str, Any] = {
            "width": rows.shape[1],
            "l2": l2,
            "l2_log_loss": losses,
            "log_loss": losses[str(l2)],
            "all": ranking_quality(p, labels),
            "within_reach": ranking_quality(p[within], labels[within]),
            "asked_by_learned_path": ranking_quality(p[asked], labels[asked]),
            "end_to_end": end_to_end_summary(table, rules_alone),
        }
        if name in curve:
            result["learning_curve"] = learning_curve(rows, d.units, l2, within)
        if name == "static_mean" and not skip_check:
            result["trainer_cross_validate_check"] = shipped_check(d, rows, l2, table, judgments)
        result["seconds"] = round(time.time() - t0, 1)
        out["representations"][name] = result
        print(name, json.dumps({k: result[k] for k in ("l2", "log_loss", "within_reach")}), flush=True)
    out["seconds"] = round(time.time() - started, 1)
    return out


def shipped_check(d: data.StudyData, rows: np.ndarray, l2: float, table: dict, judgments: dict) -> dict[str, Any]:
    """The trainer's own cross-validation (its `StoreWorthiness` scoring each clause) beside the table's,
    threshold by threshold: equal memories and covered items say the table reproduces the shipped path."""
    real = trainer.cross_validate(d.labelled, rows, d.units, l2, judgments)
    differing = [
        t for t in real if (real[t]["memories"], real[t]["covered"]) != (table[t]["memories"], table[t]["covered"])
    ]
    return {"thresholds": len(real), "differing_thresholds": differing}


def machine() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "commit": commit,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--representations", nargs="+", default=list(representations.VECTORS))
    parser.add_argument("--curve", nargs="*", default=[], help="representations to run the learning curve for")
    parser.add_argument("--skip-check", action="store_true", help="skip the trainer cross-validation check")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    info = machine()
    result = study(args.representations, args.curve, args.skip_check)
    result["machine"] = info
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
