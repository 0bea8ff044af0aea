"""Train the store-worthiness model of the learned extraction path (`extraction.worthiness`).

    python -m memstrata_bench.train_disclosure --locomo locomo-dev.json --longmemeval longmemeval_s_dev100.json.gz

Units are the clauses of the hand-labelled realistic turns (`extraction_realistic`: labels from
`benchmarks/extraction/realistic-others-labels.jsonl`, text read from the data files, never stored),
segmented exactly as the rule extractor reads them (`rules.extractor.clause_steps`). A clause is positive
when it holds every required word of one of its turn's labelled items (the bench's `covers` words
test), negative otherwise; a clause holding a must-not-contain word set is a negative of weight
`FORBID_WEIGHT`. The blind splits (`BLIND`) are never read; a turn without a label row is never a unit.

The model is an L2 logistic regression fitted by Newton's method in numpy (deterministic). Folds group
whole conversations (each LoCoMo conversation is its own fold, each LongMemEval session goes to the fold
its id hashes to), so no conversation is both trained and scored. Cross-validation chooses the L2
strength (weighted log-loss of out-of-fold probabilities), then runs the real extractor on every fold
with that fold's model at each threshold and keeps the threshold with the highest recall whose
precision is at least `TARGET_PRECISION`, or, when none reaches it, at least the rules' own precision on
the same turns (`choose`); a memory that covers no label and has no judgment counts as wrong (a
pessimistic precision: judge the unmatched memories, `judgments-realistic-others.jsonl`, for the true one).
The final weights are fitted on all units and written with that threshold and with the feature rows of
`worthiness.PROBES` (the feature code's fingerprint, which the test suite checks the shipped weights by).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from memstrata.embedders.static import StaticEmbedder
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.rules.extractor import clause_steps
from memstrata.extraction.worthiness import (
    MODEL_PATH,
    Reading,
    StoreWorthiness,
    Weights,
    features,
    probe_rows,
    read,
    sigmoid,
)

from . import extraction_realistic as realistic
from .extraction_judged import load_judgments

BLIND = frozenset({"heldout3", "heldout4"})
"""Splits labelled to test the model: never trained, tuned or printed here."""
FOLDS = 5
FORBID_WEIGHT = 3.0
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(15))
TARGET_PRECISION = 0.90


@dataclass(frozen=True, slots=True)
class Unit:
    turn: str
    fold: int
    clause: str
    original: str
    reading: Reading
    positive: bool
    weight: float


def fold_of(turn_id: str, conversations: Sequence[str]) -> int:
    """A LoCoMo conversation's own fold (by its rank among the conversations), a LongMemEval session's
    fold by the hash of its id."""
    source, group = turn_id.split(":")[:2]
    if source == "locomo":
        return sorted(conversations).index(group) % FOLDS
    return int(hashlib.sha256(group.encode()).hexdigest()[:8], 16) % FOLDS


def _holds(required: Sequence[str], text: str) -> bool:
    """The bench's words test (`covers` without the date) applied to a clause's text."""
    return realistic._holds(required, SimpleNamespace(content=text))  # type: ignore[arg-type]


def labelled_turns(locomo: str | Path, longmemeval: str | Path) -> list[tuple[realistic.Turn, realistic.Label]]:
    """The labelled turns of every split but the blind ones."""
    labels = realistic.load_labels(realistic.LABELS_DIR / f"{realistic.NAME}-labels.jsonl")
    return [
        (turn, labels[turn.id])
        for turn in realistic.turns(locomo, longmemeval)
        if turn.id in labels and labels[turn.id].split not in BLIND
    ]


def units(labelled: Sequence[tuple[realistic.Turn, realistic.Label]]) -> list[Unit]:
    """Every clause of the labelled turns, labelled by the items and forbidden sets of its turn."""
    conversations = sorted({t.id.split(":")[1] for t, _ in labelled if t.id.startswith("locomo:")})
    out = []
    for turn, label in labelled:
        for step in clause_steps(turn.text, at=turn.at, name=turn.speaker):
            original = step.ctx.original
            positive = any(_holds(item.words, original) for item in label.items)
            forbidden = any(_holds(group, original) for group in label.forbid)
            weight = FORBID_WEIGHT if forbidden and not positive else 1.0
            fold = fold_of(turn.id, conversations)
            out.append(Unit(turn.id, fold, step.ctx.clause, original, read(step.ctx.clause), positive, weight))
    return out


def design(chosen: Sequence[Unit], embedder: StaticEmbedder) -> np.ndarray:
    vectors = embedder.embed_documents([u.original for u in chosen])
    return features([u.clause for u in chosen], [u.reading for u in chosen], vectors)


def fit(rows: np.ndarray, labels: np.ndarray, weights: np.ndarray, l2: float) -> Weights:
    """L2 logistic regression on standardised rows by Newton's method (the bias is not penalised)."""
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0) + 1e-6
    z = np.hstack([(rows - mean) / scale, np.ones((len(rows), 1))])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = sigmoid(z @ beta)
        gradient = z.T @ (weights * (p - labels)) + penalty * beta
        hessian = (z * (weights * p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(z.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return Weights(coef=beta[:-1], bias=float(beta[-1]), mean=mean, scale=scale, threshold=0.5)


def log_loss(p: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> float:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(weights * (labels * np.log(p) + (1 - labels) * np.log(1 - p))).sum() / weights.sum())


def out_of_fold(rows: np.ndarray, all_units: Sequence[Unit], l2: float) -> np.ndarray:
    folds = np.array([u.fold for u in all_units])
    labels = np.array([u.positive for u in all_units], dtype=np.float64)
    weights = np.array([u.weight for u in all_units])
    p = np.zeros(len(all_units))
    for fold in range(FOLDS):
        test = folds == fold
        model = fit(rows[~test], labels[~test], weights[~test], l2)
        p[test] = model.probabilities(rows[test])
    return p


def system_score(results: Sequence[realistic.TurnResult], judgments: dict[str, bool]) -> dict[str, Any]:
    """The bench's score, plus a pessimistic precision that counts unjudged memories as wrong."""
    scored = realistic.score(results, judgments)
    memories = scored["memories"]
    scored["precision_pessimistic"] = round(scored["correct"] / memories, 4) if memories else None
    return scored


def cross_validate(
    labelled: Sequence[tuple[realistic.Turn, realistic.Label]],
    rows: np.ndarray,
    all_units: Sequence[Unit],
    l2: float,
    *,
    trainable: np.ndarray | None = None,
) -> dict[float, list[realistic.TurnResult]]:
    """threshold -> the real extractor's results on the turns of `labelled`, fold by fold, each fold
    run with the model fitted on the units of the other folds (only those `trainable` marks, when
    given: the learning curve fits on fewer turns and scores the same ones)."""
    conversations = sorted({t.id.split(":")[1] for t, _ in labelled if t.id.startswith("locomo:")})
    folds = np.array([u.fold for u in all_units])
    labels = np.array([u.positive for u in all_units], dtype=np.float64)
    weights = np.array([u.weight for u in all_units])
    allowed = np.ones(len(all_units), dtype=bool) if trainable is None else trainable
    results: dict[float, list[realistic.TurnResult]] = {}
    for fold in range(FOLDS):
        fitted_on = (folds != fold) & allowed
        base = fit(rows[fitted_on], labels[fitted_on], weights[fitted_on], l2)
        turns = [(t, label) for t, label in labelled if fold_of(t.id, conversations) == fold]
        for threshold in THRESHOLDS:
            extractor = RuleExtractor(worthiness=StoreWorthiness(weights=replace(base, threshold=threshold)))
            results.setdefault(threshold, []).extend(
                realistic.TurnResult(t, label, tuple(extractor.extract([t.message()]))) for t, label in turns
            )
    return results


def choose(table: dict[float, dict[str, Any]], floor: float) -> float:
    """The threshold with the highest recall (then precision) at pessimistic precision >= TARGET_PRECISION;
    when none reaches it, the same among those whose precision is no lower than `floor` (the rules alone,
    so the model never costs precision); failing that, the threshold with the highest precision."""

    def best(thresholds: list[float]) -> float:
        return max(thresholds, key=lambda t: (table[t]["recall"], table[t]["precision_pessimistic"], t))

    for least in (TARGET_PRECISION, floor):
        meeting = [t for t, s in table.items() if (s["precision_pessimistic"] or 0) >= least]
        if meeting:
            return best(meeting)
    return max(table, key=lambda t: (table[t]["precision_pessimistic"] or 0, table[t]["recall"]))


def train(
    locomo: str | Path, longmemeval: str | Path, *, out: Path, report: Path | None, unjudged: Path | None = None
) -> dict[str, Any]:
    labelled = labelled_turns(locomo, longmemeval)
    all_units = units(labelled)
    embedder = StaticEmbedder()
    rows = design(all_units, embedder)
    labels = np.array([u.positive for u in all_units], dtype=np.float64)
    weights = np.array([u.weight for u in all_units])
    losses = {l2: log_loss(out_of_fold(rows, all_units, l2), labels, weights) for l2 in L2_GRID}
    l2 = min(losses, key=lambda value: (losses[value], -value))
    judgments = load_judgments(realistic.LABELS_DIR / f"judgments-{realistic.NAME}.jsonl")
    rules_run = [
        realistic.TurnResult(t, label, tuple(RuleExtractor(worthiness=None).extract([t.message()])))
        for t, label in labelled
    ]
    rules_alone = system_score(rules_run, judgments)
    runs = cross_validate(labelled, rows, all_units, l2)
    table = {threshold: system_score(found, judgments) for threshold, found in runs.items()}
    if unjudged is not None:
        _write_unjudged([rules_run, *runs.values()], judgments, unjudged)
    threshold = choose(table, rules_alone["precision_pessimistic"] or 0.0)
    # the probe rows fingerprint the feature code these weights were fitted on (`worthiness.stale_features`)
    final = replace(fit(rows, labels, weights, l2), threshold=threshold, probes=probe_rows(embedder.embed_documents))
    final.save(out)
    summary = {
        "benchmark": "store-worthiness-model",
        "labelled_by": realistic.LABELLED_BY,
        "splits": sorted({label.split for _, label in labelled}),
        "turns": len(labelled),
        "clauses": len(all_units),
        "positive_clauses": int(labels.sum()),
        "forbid_negatives": int((weights > 1).sum()),
        "l2_log_loss": {str(k): round(v, 4) for k, v in losses.items()},
        "l2": l2,
        "rules_alone": rules_alone,
        "cv": [
            {"threshold": t, **{k: v for k, v in s.items() if k not in ("locomo", "longmemeval")}}
            for t, s in sorted(table.items())
        ],
        "chosen": {"threshold": threshold, **table[threshold]},
        "feature_fingerprint": final.fingerprint,
    }
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _write_unjudged(runs: Sequence[Sequence[realistic.TurnResult]], judgments: dict[str, bool], path: Path) -> None:
    """The memories of any run that match no label and have no judgment, once each (JSON lines of key,
    message and memory), for a person to judge into `judgments-realistic-others.jsonl`."""
    seen: dict[str, dict[str, str]] = {}
    for results in runs:
        for entry in realistic.unjudged(results, judgments):
            seen.setdefault(entry["key"], entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(entry) + "\n" for entry in seen.values()), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--out", type=Path, default=MODEL_PATH, help="where to write the weights (.npz)")
    parser.add_argument("--report", type=Path, default=Path("benchmarks/results/store-worthiness-cv.json"))
    parser.add_argument(
        "--unjudged", type=Path, help="write the cross-validation runs' memories no label or judgment covers here"
    )
    args = parser.parse_args(argv)
    summary = train(args.locomo, args.longmemeval, out=args.out, report=args.report, unjudged=args.unjudged)
    chosen, rules = summary["chosen"], summary["rules_alone"]
    print(
        f"{summary['clauses']} clauses ({summary['positive_clauses']} positive), l2={summary['l2']}; "
        f"rules alone: recall {rules['recall']}, precision {rules['precision_pessimistic']}; "
        f"CV at threshold {chosen['threshold']}: recall {chosen['recall']}, "
        f"precision {chosen['precision_pessimistic']} (judged only {chosen['precision']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
