"""Scoring and rank fusion for search (pure functions, no I/O).

Inputs are `(id, score)` lists, best first; outputs are per-id component scores so
that every search hit can say why it ranked where it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

RRF_K = 60
DECAY_RATE = 0.01

Ranked = Sequence[tuple[str, float]]


def min_max(ranked: Ranked) -> dict[str, float]:
    """Scale scores to [0, 1] within one list (a single or constant list maps to 1.0)."""
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return {i: 1.0 for i, _ in ranked}
    return {i: (s - low) / (high - low) for i, s in ranked}


def rrf_fusion(*lists: Ranked, k: int = RRF_K, weights: Sequence[float] | None = None) -> dict[str, float]:
    """Reciprocal-rank fusion: sum over lists of weight / (k + rank), rank starting at 1."""
    weights = weights or [1.0] * len(lists)
    fused: dict[str, float] = {}
    for weight, ranked in zip(weights, lists, strict=True):
        for rank, (memory_id, _) in enumerate(ranked, start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (k + rank)
    return fused


def recency_score(last_access: datetime, now: datetime, *, decay_rate: float = DECAY_RATE) -> float:
    """`(1 - decay_rate) ** hours_since_last_access` (LangChain's time-weighted retriever)."""
    hours = max((now - last_access).total_seconds() / 3600.0, 0.0)
    return float((1.0 - decay_rate) ** hours)
