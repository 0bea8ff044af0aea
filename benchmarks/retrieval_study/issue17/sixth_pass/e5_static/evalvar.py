"""Re-embed every stored memory of a lab store copy with a static model folder, then score hybrid (+ semantic).

    python evalvar.py BENCH MODEL_DIR [MODEL_DIR ...]     (BENCH: locomo | lme)

Stored vector = v(content) (CONTEXT_VECTOR_WEIGHT is 0.0, so with_context is the identity; the blend is
still computed via embed_records to follow the code path exactly).
"""
import json, os, sqlite3, statistics as st, sys, time
import numpy as np
sys.path.insert(0, "/tmp/e5static")
from memstrata.bench import longmemeval
from memstrata.bench.locomo_data import evidence_recall, load as load_locomo
from memstrata.bench.longmemeval_data import load as load_lme, score_case
from memstrata.embedders.static import StaticEmbedder
from memstrata.layers.context_vector import with_context
from memstrata.layers.semantic import CONTEXT_VECTOR_WEIGHT
from memstrata.memory import Memory
from memstrata.models import Scope

LOCOMO = "/work/shared/data/locomo/locomo-dev.json"
LME = "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz"
DB = {"locomo": "/tmp/e5static/locomo4.db", "lme": "/tmp/e5static/lme4.db"}


def fast_embed(bench, emb, texts):
    """embed_documents(texts) exactly (same per-1024-batch ops), with the token ids cached per bench: every
    model here shares the shipped tokenizer, so only the table differs."""
    from itertools import chain
    from memstrata.embedders.base import normalize_rows
    model = emb._loaded()
    path = f"/tmp/e5static/ids_{bench}.npz"
    if os.path.exists(path):
        z = np.load(path); flat_all, lengths_all = z["flat"], z["lengths"]
        assert len(lengths_all) == len(texts)
    else:
        ids = []
        for s in range(0, len(texts), 1024):
            ids += model.token_ids(texts[s:s + 1024])
        lengths_all = np.array([len(r) for r in ids], dtype=np.int64)
        flat_all = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths_all.sum()))
        np.savez(path, flat=flat_all, lengths=lengths_all)
    offsets = np.concatenate(([0], np.cumsum(lengths_all)))
    parts = []
    for s in range(0, len(texts), 1024):
        e = min(s + 1024, len(texts))
        lengths = lengths_all[s:e]; flat = flat_all[offsets[s]:offsets[e]]
        owner = np.repeat(np.arange(e - s), lengths)
        known = flat != model.unk_id
        flat, owner = flat[known], owner[known]
        out = np.zeros((e - s, model.table.shape[1]), dtype=np.float32)
        if flat.size:
            counts = np.bincount(owner, minlength=e - s)
            rws = np.flatnonzero(counts)
            starts = np.concatenate(([0], np.cumsum(counts[rws])[:-1]))
            out[rws] = np.add.reduceat(model.table[flat].astype(np.float32, copy=False), starts, axis=0)
        parts.append(out)
    return normalize_rows(np.concatenate(parts))


def rewrite(bench, emb):
    conn = sqlite3.connect(DB[bench])
    rows = conn.execute("SELECT user_id, id, content, context FROM memories ORDER BY rowid").fetchall()
    t = time.perf_counter()
    content = fast_embed(bench, emb, [r[2] for r in rows])
    w = CONTEXT_VECTOR_WEIGHT
    has = [w > 0 and bool((r[3] or "").strip()) for r in rows]
    ctx = np.zeros_like(content)
    if any(has):
        idx = [i for i, h in enumerate(has) if h]
        ctx[idx] = emb.embed_documents([rows[i][3] for i in idx])
    vectors = with_context(content, ctx, has, w)
    dt = time.perf_counter() - t
    conn.executemany("UPDATE memories SET embedding = ? WHERE user_id = ? AND id = ?",
                     [(v.astype(np.float32).tobytes(), r[0], r[1]) for v, r in zip(vectors, rows, strict=True)])
    conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (emb.name,))
    conn.execute("UPDATE meta SET value = ? WHERE key = 'dimensions'", (str(emb.dimensions),))
    conn.execute("UPDATE vector_versions SET version = version + 1")
    conn.commit(); conn.close()
    return len(rows), dt


ROWS = []


def score_locomo(m, strategy):
    rows = []
    for c in load_locomo(LOCOMO):
        scope = Scope(f"locomo-{c.sample_id}")
        for q in c.questions:
            hits = m.search(q.question, scope=scope, k=50, strategy=strategy)
            prov = [h.memory.source_ids for h in hits]
            rows.append({"cat": q.category, "r10": evidence_recall(q.evidence, prov, 10)})
    ROWS.append(rows)
    out = {"all": round(st.mean(r["r10"] for r in rows), 4)}
    for cat in "1234":
        out["c" + cat] = round(st.mean(r["r10"] for r in rows if r["cat"] == cat), 3)
    return out


def score_lme(m, strategy):
    rows = []
    for case in load_lme(LME):
        ranked = longmemeval.search(m, case, k=50, strategy=strategy)
        rows.append({"type": case.question_type, **score_case(case, ranked)})
    ROWS.append(rows)
    out = {"turn_r10": round(st.mean(r["turn_recall@10"] for r in rows if "turn_recall@10" in r), 4)}
    for t in sorted({r["type"] for r in rows}):
        out[t] = round(st.mean(r["turn_recall@10"] for r in rows if r["type"] == t and "turn_recall@10" in r), 3)
    return out


if __name__ == "__main__":
    bench = sys.argv[1]
    strategies = os.environ.get("STRATS", "hybrid,semantic").split(",")
    for d in sys.argv[2:]:
        emb = StaticEmbedder(d); emb.load()
        n, dt = rewrite(bench, emb)
        res = {"bench": bench, "model": os.path.basename(d.rstrip("/")), "n": n, "embed_s": round(dt, 1)}
        with Memory(store=DB[bench], embedder=emb, track_access=False) as m:
            for s in strategies:
                t = time.perf_counter()
                res[s] = (score_locomo if bench == "locomo" else score_lme)(m, s)
                res[s + "_s"] = round(time.perf_counter() - t, 1)
        print(json.dumps(res), flush=True)
        if os.environ.get("ROWS"):
            json.dump(dict(zip(strategies, ROWS)), open(f"/tmp/e5static/rows_{bench}_{res['model']}.json", "w"))
        ROWS.clear()
        with open("/tmp/e5static/results.jsonl", "a") as f:
            f.write(json.dumps(res) + "\n")
