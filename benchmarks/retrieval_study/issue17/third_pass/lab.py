"""Scratch lab: LoCoMo dev, one ingest, many ranking variants (not part of the repo)."""
import sys, time, json, os
from pathlib import Path
from memstrata.memory import Memory
from memstrata.models import Scope
from memstrata.bench import locomo
from memstrata.bench.locomo_data import load, evidence_recall
from memstrata.layers.semantic import SemanticMemory
from memstrata.core.retrieval import HybridParams

DATA = os.environ.get("LOCOMO", "locomo-dev.json")
DB = "./locomo.db"

def open_memory(fresh=False):
    if fresh and os.path.exists(DB):
        os.remove(DB)
    m = Memory(store=DB, embedder="static", track_access=False)
    return m

def ingest_all(m, convs):
    for c in convs:
        m.store.erase_user(f"locomo-{c.sample_id}")
        locomo.ingest(m, c)

def evaluate(m, convs, params=None, layer_cls=SemanticMemory, k=10, detail=False):
    layer = layer_cls(store=m.store, embedder=m.embedder, clock=m.clock, track_access=False, params=params or HybridParams())
    rows = []
    t0 = time.perf_counter()
    for c in convs:
        sc = Scope(f"locomo-{c.sample_id}")
        for q in c.questions:
            hits = layer.search(sc, q.question, k=max(k, 50) if detail else k)
            prov = [h.memory.source_ids for h in hits]
            rows.append(dict(conv=c.sample_id, cat=q.category, q=q.question, ev=list(q.evidence),
                             r10=evidence_recall(q.evidence, prov, 10), r50=evidence_recall(q.evidence, prov, 50) if detail else None,
                             top=[p[0] for p in prov[:20]]))
    dt = time.perf_counter() - t0
    return rows, dt

def summary(rows):
    import statistics as st
    out = {"all": round(st.mean(r["r10"] for r in rows), 4)}
    for cat in "1234":
        out["c"+cat] = round(st.mean(r["r10"] for r in rows if r["cat"] == cat), 4)
    convs = sorted(set(r["conv"] for r in rows))
    out["conv"] = [round(st.mean(r["r10"] for r in rows if r["conv"] == c), 3) for c in convs]
    return out

if __name__ == "__main__":
    convs = load(DATA)
    fresh = not os.path.exists(DB)
    m = open_memory(fresh=False)
    if fresh:
        ingest_all(m, convs)
    rows, dt = evaluate(m, convs, detail=True)
    print(summary(rows), round(dt, 1), "s")
    import statistics as st
    print("r50 pool (final ranking top50)", round(st.mean(r["r50"] for r in rows), 4))
    json.dump(rows, open("./base_rows.json", "w"))
