"""End-to-end check of memstrata.core.retrieval on LoCoMo dev: ablation ladder, LOCO-free fixed settings,
per-conversation spread and search-time cost. Uses the library functions, string ids (dia_id), a
single shared FTS5 table for all users (like the SQLite store), and the StaticEmbedder.

Run: cd <repo> && . .venv/bin/activate && python benchmarks/retrieval_study/final_eval.py
"""
from __future__ import annotations

from pathlib import Path

import json
import sqlite3
import statistics
import sys
import time
from datetime import datetime

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from memstrata.core.retrieval import (  # noqa: E402
    KEYWORD_COLUMN_WEIGHTS,
    HybridParams,
    hybrid_rank,
    index_columns,
)
from memstrata.embedders.static import StaticEmbedder  # noqa: E402
from memstrata.storage.sqlite import fts_query  # noqa: E402

from data import load  # noqa: E402

KS = (1, 5, 10, 20)
convs = load()
when = {}
for c in convs:
    for t in c.turns:
        when[(c.sample_id, t.dia_id)] = datetime.strptime(t.date, "%I:%M %p on %d %B, %Y")


def build_fts(expanded: bool) -> sqlite3.Connection:
    """One FTS5 table for every user, like the store. Columns: user_id, content[, context, date]."""
    db = sqlite3.connect(":memory:")
    cols = "content, context, date" if expanded else "content"
    db.execute(f"CREATE VIRTUAL TABLE fts USING fts5(user_id UNINDEXED, dia_id UNINDEXED, {cols}, "
               "tokenize='porter unicode61')")
    for c in convs:
        prev: list[str] = []
        session = None
        for t in c.turns:
            if t.session != session:
                prev, session = [], t.session
            if expanded:
                row = index_columns(t.text, prev, when[(c.sample_id, t.dia_id)])
            else:
                row = (t.text,)
            db.execute(f"INSERT INTO fts VALUES (?, ?, {', '.join('?' * len(row))})", (c.sample_id, t.dia_id, *row))
            prev.append(t.text)
    return db


def kw_search(db, expanded: bool, user: str, query: str, limit: int = 50):
    match = fts_query(query)
    if match is None:
        return []
    match = match.removeprefix("content:")  # search every text column
    w = ", ".join(str(x) for x in ((0.0, 0.0, *KEYWORD_COLUMN_WEIGHTS) if expanded else (0.0, 0.0, 1.0)))
    sql = (f"SELECT dia_id, -bm25(fts, {w}) FROM fts WHERE fts MATCH ? AND user_id = ? "
           f"ORDER BY bm25(fts, {w}) LIMIT ?")
    return [(d, float(s)) for d, s in db.execute(sql, (match, user, limit))]


def load_dense(model: str):
    out = []
    for c in convs:
        D = np.load(f"{Path(__file__).resolve().parent}/cache/{model}_{c.sample_id}_docs.npy")
        Q = np.load(f"{Path(__file__).resolve().parent}/cache/{model}_{c.sample_id}_qs.npy")
        out.append((D, Q))
    return out


def vec_search(D, qv, ids, limit=50):
    s = D @ qv
    top = np.argpartition(-s, min(limit, len(s) - 1))[:limit]
    top = top[np.argsort(-s[top])]
    return [(ids[i], float(s[i])) for i in top]


def evaluate(name, expanded, dense_model, params):
    db = build_fts(expanded)
    dense = load_dense(dense_model) if dense_model else None
    rows = []
    for ci, c in enumerate(convs):
        ids = [t.dia_id for t in c.turns]
        speaker_of = {t.dia_id: t.speaker for t in c.turns}
        for qi, q in enumerate(c.questions):
            kw = kw_search(db, expanded, c.sample_id, q.text, params.depth)
            vec = vec_search(dense[ci][0], dense[ci][1][qi], ids, params.depth) if dense else []
            hits = hybrid_rank(kw, vec, query=q.text, speaker_of=speaker_of, params=params)
            ranked = [h.id for h in hits]
            ev = set(q.evidence)
            rows.append((ci, q.category, *[len(ev.intersection(ranked[:k])) / len(ev) for k in KS]))
    a = np.array(rows)
    res = {"name": name, "all": a[:, 2:].mean(0).round(4).tolist(),
           **{f"c{k}": a[a[:, 1] == k, 2:].mean(0).round(4).tolist() for k in (1, 2, 3, 4)},
           "conv": [a[a[:, 0] == i, 2:].mean(0).round(4).tolist() for i in range(len(convs))]}
    r10 = [x[2] for x in res["conv"]]
    print(f"| {name} | {res['all'][1]:.3f} | {res['all'][2]:.3f} | "
          + " / ".join(f"{res[f'c{k}'][2]:.3f}" for k in (1, 2, 3, 4))
          + f" | {res['all'][0]:.3f} | {res['all'][3]:.3f} | {min(r10):.3f}–{max(r10):.3f} |", flush=True)
    return res


def timing(n_rounds=3):
    """Median per-query cost of the recommended search: query embedding + vector top-50 + FTS top-50
    + hybrid_rank, on the shared FTS table (2,760 turns, 5 users)."""
    db = build_fts(True)
    emb = StaticEmbedder()
    emb.load()
    mats = [emb.embed_documents([t.text for t in c.turns]) for c in convs]
    parts = {"embed": [], "vector": [], "fts": [], "rank": [], "total": []}
    p = HybridParams()
    for _ in range(n_rounds):
        for ci, c in enumerate(convs):
            ids = [t.dia_id for t in c.turns]
            speaker_of = {t.dia_id: t.speaker for t in c.turns}
            for q in c.questions:
                t0 = time.perf_counter()
                qv = emb.embed_query(q.text)
                t1 = time.perf_counter()
                vec = vec_search(mats[ci], qv, ids, p.depth)
                t2 = time.perf_counter()
                kw = kw_search(db, True, c.sample_id, q.text, p.depth)
                t3 = time.perf_counter()
                hybrid_rank(kw, vec, query=q.text, speaker_of=speaker_of, params=p, limit=10)
                t4 = time.perf_counter()
                for k, v in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                    parts[k].append(v * 1000)
    out = {k: {"median_ms": round(statistics.median(v), 3), "p95_ms": round(float(np.percentile(v, 95)), 3)}
           for k, v in parts.items()}
    print("timing (ms):", out)
    return out


if __name__ == "__main__":
    print("| variant | R@5 | R@10 | R@10 c1 / c2 / c3 / c4 | R@1 | R@20 | per-conv R@10 |")
    print("|---|---|---|---|---|---|---|")
    off = dict(speaker_boost=0.0)
    runs = [
        ("BM25 (store FTS5, content only)", False, None, HybridParams(vector_weight=0.0, **off)),
        ("m2v-256 dense only", False, "m2v", HybridParams(vector_weight=1.0, **off)),
        ("BM25 + m2v, seed 0.7 dense/0.3 kw min-max", False, "m2v", HybridParams(vector_weight=0.7, **off)),
        ("BM25 + m2v, RRF k=60", False, "m2v", HybridParams(fusion="rrf", vector_weight=0.5, **off)),
        ("BM25 + m2v, 0.2 dense min-max", False, "m2v", HybridParams(**off)),
        ("BM25 + speaker boost", False, None, HybridParams(vector_weight=0.0)),
        ("expanded BM25 (content+context+date)", True, None, HybridParams(vector_weight=0.0, **off)),
        ("expanded BM25 + speaker boost", True, None, HybridParams(vector_weight=0.0)),
        ("expanded BM25 + m2v RRF k=60 + speaker", True, "m2v", HybridParams(fusion="rrf", vector_weight=0.5)),
        ("expanded BM25 + m2v 0.7/0.3 min-max + speaker", True, "m2v", HybridParams(vector_weight=0.7)),
        ("**recommended: expanded BM25 + m2v 0.2 min-max + speaker 1.0**", True, "m2v", HybridParams()),
        ("recommended, e5 instead of m2v", True, "e5", HybridParams()),
        ("recommended, e5, vector weight 0.3", True, "e5", HybridParams(vector_weight=0.3)),
    ]
    results = [evaluate(*r) for r in runs]
    t = timing()
    json.dump({"results": results, "timing": t, "conversations": [c.sample_id for c in convs],
               "questions": sum(len(c.questions) for c in convs)},
              open(Path(__file__).resolve().parent / "results/final_eval.json", "w"), indent=1)
