"""Query-embedding cost, static vs e5, alternating per query (same moment of the machine's load)."""
import json, pickle, statistics as st, sys, time
from memstrata.embedders.e5 import E5Embedder
from memstrata.embedders.registry import resolve_embedder as create
qs = [q["query"] for q in pickle.load(open("cands_locomo.pkl", "rb"))][:200]
static, e5 = create("static"), E5Embedder()
static.embed_query("warm up"); e5.embed_query("warm up")
t_s, t_e = [], []
for q in qs:
    t = time.perf_counter(); static.embed_query(q); t_s.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter(); e5.embed_query(q); t_e.append((time.perf_counter() - t) * 1000)
def p(x, f): return round(sorted(x)[int(f * (len(x) - 1))], 2)
out = {"queries": len(qs), "static_ms_p50_p95": [p(t_s, .5), p(t_s, .95)], "e5_ms_p50_p95": [p(t_e, .5), p(t_e, .95)]}
print(json.dumps(out))
json.dump(out, open("query_embedding_latency.json", "w"))
