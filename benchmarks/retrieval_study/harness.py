"""FTS5 keyword search, dense scores and recall evaluation for the LoCoMo retrieval study."""

from __future__ import annotations

from pathlib import Path

import sqlite3
import statistics
import sys
from collections.abc import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from memstrata.core.text import STOPWORDS, content_terms, words  # noqa: E402

from data import Conversation, Turn, load  # noqa: E402

KS = (1, 5, 10, 20)


def fts_query_terms(query: str, stop: frozenset[str] = STOPWORDS) -> list[str]:
    """Non-stopword words of the query (text.words), part before an apostrophe, deduped."""
    out = []
    for w in words(query):
        if w in stop:
            continue
        w = w.split("'")[0]
        if w and w not in stop:
            out.append(w)
    return list(dict.fromkeys(out))


def fts_match(terms: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


class FTS:
    """An in-memory FTS5 table over one conversation; rowid = turn position + 1.

    `columns` is a list of per-turn strings per column; `weights` are bm25() column weights.
    """

    def __init__(self, columns: list[list[str]], weights: Sequence[float] | None = None,
                 tokenizer: str = "porter unicode61"):
        self.db = sqlite3.connect(":memory:")
        names = [f"c{i}" for i in range(len(columns))]
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(names)}, tokenize='{tokenizer}')")
        rows = list(zip(*columns))
        self.db.executemany(
            f"INSERT INTO t(rowid, {', '.join(names)}) VALUES (?, {', '.join('?' * len(names))})",
            [(i + 1, *r) for i, r in enumerate(rows)],
        )
        self.n = len(rows)
        w = ", ".join(str(float(x)) for x in (weights or [1.0] * len(columns)))
        self.sql = f"SELECT rowid - 1, -bm25(t, {w}) FROM t WHERE t MATCH ? ORDER BY bm25(t, {w}) LIMIT ?"

    def search(self, terms: Sequence[str], limit: int = 1000) -> list[tuple[int, float]]:
        if not terms:
            return []
        return [(int(i), float(s)) for i, s in self.db.execute(self.sql, (fts_match(terms), limit))]


def recall_at(ranked: Sequence[int], evidence: set[int], k: int) -> float:
    return len(evidence.intersection(ranked[:k])) / len(evidence)


def evidence_idx(conv: Conversation) -> list[set[int]]:
    pos = {t.dia_id: i for i, t in enumerate(conv.turns)}
    return [{pos[e] for e in q.evidence} for q in conv.questions]


Ranker = Callable[[int, int], Sequence[int]]  # (conv index, question index) -> ranked turn positions


def evaluate(convs: list[Conversation], ranker: Ranker) -> dict:
    """Recall@k overall, per category and per conversation."""
    rows = []  # (conv, cat, r1, r5, r10, r20)
    for ci, conv in enumerate(convs):
        evs = evidence_idx(conv)
        for qi, q in enumerate(conv.questions):
            ranked = list(ranker(ci, qi))
            rows.append((ci, q.category, *[recall_at(ranked, evs[qi], k) for k in KS]))
    arr = np.array(rows)
    res: dict = {"all": arr[:, 2:].mean(0).tolist(), "n": len(rows)}
    for cat in (1, 2, 3, 4):
        res[f"c{cat}"] = arr[arr[:, 1] == cat, 2:].mean(0).tolist()
    res["conv"] = [arr[arr[:, 0] == ci, 2:].mean(0).tolist() for ci in range(len(convs))]
    return res


def fmt(name: str, res: dict, width: int = 44) -> str:
    a = res["all"]
    c = [res[f"c{k}"] for k in (1, 2, 3, 4)]
    conv10 = [x[2] for x in res["conv"]]
    return (f"{name:<{width}} R@1 {a[0]:.3f} R@5 {a[1]:.3f} R@10 {a[2]:.3f} R@20 {a[3]:.3f} | R@10 c1-4 "
            + " ".join(f"{x[2]:.3f}" for x in c)
            + f" | R@5 c1-4 " + " ".join(f"{x[1]:.3f}" for x in c)
            + f" | conv R@10 min {min(conv10):.3f} max {max(conv10):.3f} sd {statistics.pstdev(conv10):.3f}")


def default_index_text(conv: Conversation) -> list[str]:
    return [t.text for t in conv.turns]


__all__ = ["FTS", "Turn", "evaluate", "fmt", "fts_query_terms", "load", "KS"]
