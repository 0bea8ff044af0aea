"""Ranking-quality measures of out-of-fold probabilities (pure functions of scores and 0/1 labels).

Ties are handled as a threshold sees them: clauses with the same score are kept or dropped together.
"""

from __future__ import annotations

import numpy as np


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: the chance that a random positive outscores a random negative (a tie
    counts one half), by the Mann-Whitney rank sum with average ranks for ties."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=bool)
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    start = 0
    while start < len(scores):
        end = start
        while end + 1 < len(scores) and sorted_scores[end + 1] == sorted_scores[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2 + 1
        start = end + 1
    positives, negatives = int(labels.sum()), int((~labels).sum())
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def precision_recall_steps(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, kept positives) at every distinct threshold, highest score first."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=bool)
    order = np.argsort(-scores, kind="mergesort")
    hits = np.cumsum(labels[order])
    last_of_tie = np.r_[np.diff(scores[order]) != 0, True]
    kept = np.flatnonzero(last_of_tie) + 1
    found = hits[kept - 1]
    return found / kept, found / max(int(labels.sum()), 1), found


def average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """The mean precision over the recall gained at each threshold (scikit-learn's definition)."""
    precision, recall, _ = precision_recall_steps(scores, labels)
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def recall_at_precision(scores: np.ndarray, labels: np.ndarray, least: float) -> dict[str, float | int]:
    """The most positives any threshold keeps at precision >= `least` (0 when none reaches it); this
    threshold is chosen on the very scores it is measured on, so it is an upper bound for a threshold
    chosen in advance."""
    precision, recall, found = precision_recall_steps(scores, labels)
    meeting = np.flatnonzero(precision >= least)
    best = int(meeting[np.argmax(recall[meeting])]) if meeting.size else None
    return {
        "recall": round(float(recall[best]), 4) if best is not None else 0.0,
        "positives_kept": int(found[best]) if best is not None else 0,
        "positives": int(np.asarray(labels, dtype=bool).sum()),
    }
