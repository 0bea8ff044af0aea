"""Learning curve of the store-worthiness model: are more labelled turns the lever?

The model of `memstrata.bench.train_disclosure` is fitted, fold by fold (the trainer's folds, grouped by
conversation), on more or fewer training turns and always scored on the same turns: the 680 of the
splits the sixth pass was trained on (dev, heldout, heldout2, train, train2). Training sets: half and
three quarters of those 680 (three draws each, by the hash of the turn id), all 680, + train3 (880), +
train3 + train4 (1080). Per training set: the out-of-fold log-loss and AUC of the clauses of the 680
turns, and the real extractor's recall and precision on them at every threshold (a memory no label
covers counts as wrong unless judged in `judgments-realistic-others.jsonl`; `unjudged` says how many
were not). The blind splits (`train_disclosure.BLIND`) are never read.

    PYTHONPATH=$PWD python benchmarks/store_worthiness_curve.py \
        --locomo /work/shared/data/locomo/locomo-dev.json \
        --longmemeval /work/shared/data/longmemeval/longmemeval_s_dev100.json.gz \
        --out benchmarks/results/store-worthiness-curve.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
from pathlib import Path

import numpy as np

from memstrata.bench import extraction_realistic as realistic
from memstrata.bench import train_disclosure as trainer
from memstrata.bench.extraction_judged import load_judgments
from memstrata.embedders.static import StaticEmbedder
from memstrata.extraction.rules import RuleExtractor

SCORED = frozenset({"dev", "heldout", "heldout2", "train", "train2"})
L2 = 100.0  # the strength the trainer's log-loss grid picks on every training set here


def _share(turn_id: str, draw: int) -> float:
    """A stable number in [0, 1) per turn and draw: which turns a partial training set keeps."""
    return int(hashlib.sha256(f"{draw}:{turn_id}".encode()).hexdigest()[:8], 16) / 2**32


def _auc(p: np.ndarray, labels: np.ndarray) -> float:
    ranks = np.empty(len(p))
    ranks[np.argsort(p, kind="stable")] = np.arange(1, len(p) + 1)
    positive = labels.sum()
    return float((ranks[labels == 1].sum() - positive * (positive + 1) / 2) / (positive * (len(p) - positive)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    labelled = trainer.labelled_turns(args.locomo, args.longmemeval)
    units = trainer.units(labelled)
    rows = trainer.design(units, StaticEmbedder())
    split = {turn.id: label.split for turn, label in labelled}
    scored_turns = [(turn, label) for turn, label in labelled if label.split in SCORED]
    scored = np.array([split[u.turn] in SCORED for u in units])
    labels = np.array([u.positive for u in units], dtype=np.float64)
    weights = np.array([u.weight for u in units])
    folds = np.array([u.fold for u in units])
    judgments = load_judgments(realistic.LABELS_DIR / f"judgments-{realistic.NAME}.jsonl")
    rules_alone = trainer.system_score(
        [
            realistic.TurnResult(t, label, tuple(RuleExtractor(worthiness=None).extract([t.message()])))
            for t, label in scored_turns
        ],
        judgments,
    )

    training_sets = [
        (
            f"680 x {share} (draw {draw})",
            np.array([scored[i] and _share(u.turn, draw) < share for i, u in enumerate(units)]),
        )
        for share in (0.5, 0.75)
        for draw in (1, 2, 3)
    ]
    training_sets += [
        ("680: dev, heldout, heldout2, train, train2", scored),
        ("880: + train3", np.array([split[u.turn] in SCORED | {"train3"} for u in units])),
        ("1080: + train3, train4", np.ones(len(units), dtype=bool)),
    ]
    curve = []
    for name, trainable in training_sets:
        p = np.zeros(len(units))
        for fold in range(trainer.FOLDS):
            test, fitted_on = folds == fold, (folds != fold) & trainable
            p[test] = trainer.fit(rows[fitted_on], labels[fitted_on], weights[fitted_on], L2).probabilities(rows[test])
        runs = trainer.cross_validate(scored_turns, rows, units, L2, trainable=trainable)
        table = {threshold: trainer.system_score(found, judgments) for threshold, found in runs.items()}
        floor = rules_alone["precision_pessimistic"]
        meeting = [t for t, s in table.items() if s["precision_pessimistic"] >= floor]
        best = max(meeting, key=lambda t: (table[t]["recall"], table[t]["precision_pessimistic"])) if meeting else None
        entry = {
            "training": name,
            "training_turns": len({u.turn for u, keep in zip(units, trainable, strict=True) if keep}),
            "log_loss": round(trainer.log_loss(p[scored], labels[scored], weights[scored]), 4),
            "auc": round(_auc(p[scored], labels[scored]), 4),
            "best_at_rules_precision": None if best is None else {"threshold": best, **_brief(table[best])},
            "by_threshold": {str(t): _brief(s) for t, s in sorted(table.items())},
        }
        curve.append(entry)
        print(json.dumps({k: v for k, v in entry.items() if k != "by_threshold"}), flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "store-worthiness-learning-curve",
                "command": " ".join(["python", *sys.argv]),
                "machine": platform.platform(),
                "labelled_by": realistic.LABELLED_BY,
                "scored_turns": len(scored_turns),
                "l2": L2,
                "rules_alone": _brief(rules_alone),
                "curve": curve,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


def _brief(score: dict) -> dict:
    keys = ("recall", "covered", "items", "precision_pessimistic", "correct", "memories", "unjudged")
    return {k: score[k] for k in keys}


if __name__ == "__main__":
    sys.exit(main())
