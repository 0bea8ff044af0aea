"""Lab: two vectors per turn searched together — the content's and the context-mixed one (w) — each memory
scored by the better of its two similarities (emulated: the store holds the content vectors, the mixed ones
are held here). python second.py locomo|lme W"""
import json, sqlite3, sys, time
import numpy as np
from lab4 import DB, open_memory, rewrite, score_locomo, score_lme
from memstrata.embedders.base import normalize_rows
from memstrata.storage.base import ScoredRow

bench, w = sys.argv[1], float(sys.argv[2])
with open_memory(bench) as m:
    rewrite(bench, "content", m.embedder)  # the store holds the content vectors
with open_memory(bench) as m:
    conn = sqlite3.connect(DB[bench])
    data = conn.execute("SELECT user_id, id, embedding, context FROM memories ORDER BY rowid").fetchall()
    conn.close()
    content = np.stack([np.frombuffer(r[2], dtype=np.float32) for r in data])
    has = [bool(r[3].strip()) for r in data]
    ctx = np.zeros_like(content)
    idx = [i for i, h in enumerate(has) if h]
    ctx[idx] = m.embedder.embed_documents([data[i][3] for i in idx])
    mixed = normalize_rows(content + w * ctx)
    by_user = {}
    for i, r in enumerate(data):
        by_user.setdefault(r[0], []).append(i)
    store = m.store
    original = store.vector_search

    def vector_search(user_id, vector, where, *, limit):
        found = {row.record.id: row for row in original(user_id, vector, where, limit=limit)}
        rows_ = by_user[user_id]
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        sims = mixed[rows_] @ q
        order = np.argsort(-sims)[: limit * 2]
        ids = [data[rows_[j]][1] for j in order]
        records = {r.id: r for r in store.get(user_id, ids)}
        at = where.as_of
        for j, mid in zip(order, ids):
            rec = records.get(mid)
            if rec is None or (at is not None and rec.created_at > at):
                continue
            score = float(sims[j])
            if mid not in found or found[mid].score < score:
                found[mid] = ScoredRow(rec, score)
        return sorted(found.values(), key=lambda r: -r.score)[:limit]

    store.vector_search = vector_search
    t = time.perf_counter()
    rows_out, out = (score_locomo if bench == "locomo" else score_lme)(m)
json.dump(rows_out, open(f"rows4_{bench}_second_{w}.json", "w"))
print(bench, f"second:{w}", json.dumps(out), round(time.perf_counter() - t, 1), "s")
