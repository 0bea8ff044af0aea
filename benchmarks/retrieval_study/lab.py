"""Shared precomputation: keyword candidate lists per config and dense score matrices."""
from __future__ import annotations

import functools
import os

import numpy as np

from bm25_expand import ctx_cols
from bm25_variants import own, q_base
from harness import FTS, evaluate, fmt, load

convs = load()
HERE = os.path.dirname(__file__)

KW_CONFIGS = {
    "plain": (own, None),
    "exp": (ctx_cols(2, True, True), [1, 0.5, 0.2, 1.0]),
}


@functools.cache
def kw_lists(config: str = "plain", depth: int = 200) -> list[list[list[tuple[int, float]]]]:
    cols_fn, w = KW_CONFIGS[config]
    out = []
    for c in convs:
        f = FTS(cols_fn(c), w)
        out.append([f.search(q_base(c, q.text), depth) for q in c.questions])
    return out


@functools.cache
def dense(model: str) -> list[np.ndarray]:
    """Per conversation: (n_questions, n_turns) cosine matrix."""
    out = []
    for c in convs:
        D = np.load(f"{HERE}/cache/{model}_{c.sample_id}_docs.npy")
        Q = np.load(f"{HERE}/cache/{model}_{c.sample_id}_qs.npy")
        out.append(Q @ D.T)
    return out


def dense_lists(model: str, depth: int) -> list[list[list[tuple[int, float]]]]:
    out = []
    for S in dense(model):
        top = np.argsort(-S, axis=1)[:, :depth]
        out.append([[(int(i), float(S[qi, i])) for i in row] for qi, row in enumerate(top)])
    return out


@functools.cache
def neighbours() -> list[dict[int, tuple[int, ...]]]:
    out = []
    for c in convs:
        ts = c.turns
        nb = {}
        for i, t in enumerate(ts):
            nb[i] = tuple(j for j in (i - 1, i + 1) if 0 <= j < len(ts) and ts[j].session == t.session)
        out.append(nb)
    return out


def report(name, ranker, width=52):
    res = evaluate(convs, ranker)
    print(fmt(name, res, width), flush=True)
    return res
