"""Prototype fusion functions (ids are ints here; the library version is generic)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Hits = Sequence[tuple[int, float]]


def norm(hits: Hits, method: str) -> dict[int, float]:
    if not hits:
        return {}
    s = [x for _, x in hits]
    if method == "minmax":
        lo, hi = min(s), max(s)
        return {i: (x - lo) / (hi - lo) if hi > lo else 1.0 for i, x in hits}
    if method == "max":
        hi = max(s)
        return {i: x / hi if hi > 0 else 0.0 for i, x in hits}
    if method == "z":
        m = sum(s) / len(s)
        sd = math.sqrt(sum((x - m) ** 2 for x in s) / len(s)) or 1.0
        return {i: (x - m) / sd for i, x in hits}
    if method == "raw":
        return {i: x for i, x in hits}
    if method == "rank":
        n = len(hits)
        return {i: 1.0 - r / n for r, (i, _) in enumerate(hits)}
    if method == "rank_recip":
        return {i: 1.0 / (r + 1) for r, (i, _) in enumerate(hits)}
    raise ValueError(method)


def weighted(lists: Mapping[str, Hits], weights: Mapping[str, float], method: str = "minmax",
             missing: float = 0.0) -> dict[int, float]:
    out: dict[int, float] = {}
    normed = {k: norm(v, method) for k, v in lists.items()}
    ids = set().union(*normed.values()) if normed else set()
    for i in ids:
        out[i] = sum(weights[k] * normed[k].get(i, missing) for k in lists)
    return out


def rrf(lists: Sequence[Hits], k: float = 60, weights: Sequence[float] | None = None) -> dict[int, float]:
    out: dict[int, float] = {}
    for li, hits in enumerate(lists):
        w = 1.0 if weights is None else weights[li]
        for r, (i, _) in enumerate(hits):
            out[i] = out.get(i, 0.0) + w / (k + r + 1)
    return out


def smooth(scores: Mapping[int, float], neighbours: Mapping[int, Sequence[int]], lam: float,
           add_new: bool = True) -> dict[int, float]:
    out = dict(scores) if add_new else dict(scores)
    for i, s in scores.items():
        for j in neighbours.get(i, ()):
            if j in scores or add_new:
                out[j] = out.get(j, 0.0) + lam * s
    return out


def ranked(scores: Mapping[int, float]) -> list[int]:
    return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]
