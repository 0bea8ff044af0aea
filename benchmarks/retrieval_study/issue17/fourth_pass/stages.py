"""Where a LoCoMo search spends its time, for the memstrata on PYTHONPATH: the 760 dev questions searched as
`bench locomo` searches them (`Memory.search`, k=10, access tracking on), with a timer around each stage.

Usage: stages.py DB OUT_JSON [PASSES]. DB is a store `ingest.py` wrote with the same code. The stages are
wrapped on the Memory's own objects (embedder, store, semantic module functions), so the wrappers exist in
every version; a stage a version does not have is absent from its figures. The first pass warms the
caches and is not counted."""
import json, os, statistics, sys, time, cProfile, pstats, io

import memstrata
from memstrata.bench.locomo_data import load
from memstrata.memory import Memory
from memstrata.layers import semantic as S

DATA = os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo-dev.json")
passes = int(sys.argv[3]) if len(sys.argv) > 3 else 3
spent: dict[str, float] = {}


def timed(name, fn):
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
    return wrapper


convs = load(DATA)
questions = [(f"locomo-{c.sample_id}", q.question) for c in convs for q in c.questions]
with Memory(store=sys.argv[1], embedder="static") as m:
    layer = m._layers.semantic
    m.embedder.embed_query = timed("embed_query", m.embedder.embed_query)
    for name in ("hybrid_candidates", "vector_search", "keyword_search", "record_access"):
        setattr(m.store, name, timed(f"store.{name}", getattr(m.store, name)))
    for name in ("_rank", "_query_windows", "_without_speakers", "_speakers_of", "find_dates"):
        if hasattr(S, name):
            setattr(S, name, timed(name, getattr(S, name)))
    per_stage, totals = [], []
    prof = cProfile.Profile()
    for p in range(passes):
        for user, q in questions:
            spent.clear()
            if p == passes - 1:
                prof.enable()
            t = time.perf_counter()
            m.search(q, scope=user, k=10)
            total = time.perf_counter() - t
            if p == passes - 1:
                prof.disable()
            if p:
                totals.append(total * 1000)
                per_stage.append({k: v * 1000 for k, v in spent.items()})
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
names = sorted({k for row in per_stage for k in row})
def pct(values, q):
    values = sorted(values)
    return round(values[int(q * len(values))], 3)
out = {
    "src": memstrata.__file__, "db": sys.argv[1], "searches": len(totals), "load_average": list(os.getloadavg()),
    "total_ms": {"p50": pct(totals, 0.5), "p95": pct(totals, 0.95), "mean": round(statistics.mean(totals), 3)},
    "stages_ms": {n: {"mean": round(statistics.mean(r.get(n, 0.0) for r in per_stage), 3),
                      "p95": pct([r.get(n, 0.0) for r in per_stage], 0.95)} for n in names},
}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(json.dumps(out, indent=1))
print(s.getvalue()[:6000])
