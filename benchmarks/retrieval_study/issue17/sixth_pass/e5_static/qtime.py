"""Median embed_query time over 500 LoCoMo questions, shipped vs new static models (interleaved, fresh embedders)."""
import json, statistics as st, sys, time
sys.path.insert(0, "/work/main")
from memstrata.bench.locomo_data import load as load_locomo
from memstrata.embedders.static import StaticEmbedder
qs = []
for c in load_locomo("/work/shared/data/locomo/locomo-dev.json"):
    qs += [q.question for q in c.questions]
qs = list(dict.fromkeys(qs))[:500]
embs = {d: StaticEmbedder(d) for d in sys.argv[1:]}
for e in embs.values(): e.load(); e.embed_query("warm up")
times = {d: [] for d in embs}
for q in qs:
    for d, e in embs.items():
        t = time.perf_counter_ns(); e.embed_query(q); times[d].append(time.perf_counter_ns() - t)
print(len(qs), "queries")
for d, ts in times.items():
    print(json.dumps({"model": d, "median_us": round(st.median(ts) / 1000, 1), "p90_us": round(sorted(ts)[int(.9 * len(ts))] / 1000, 1)}))
