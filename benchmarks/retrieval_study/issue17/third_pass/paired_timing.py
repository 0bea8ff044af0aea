"""Search time with the plain vector query on and off, on the same store at the same moment: per LoCoMo
question, the two settings alternate, fastest of 3 each (run `lab.py` first to build locomo.db)."""
import json, os, statistics, sys, time
from dataclasses import replace
from memstrata.memory import Memory
from memstrata.models import Scope
from memstrata.bench.locomo_data import load
from memstrata.core.retrieval import HybridParams
from memstrata.layers.semantic import SemanticMemory

convs = load(os.environ.get("LOCOMO", "locomo-dev.json"))
with Memory(store="locomo.db", embedder="static", track_access=False) as m:
    layers = {name: SemanticMemory(store=m.store, embedder=m.embedder, clock=m.clock, track_access=False, params=p)
              for name, p in (("whole", replace(HybridParams(), plain_vector_query=False)), ("plain", HybridParams()))}
    times = {name: [] for name in layers}
    for c in convs:
        for q in c.questions:
            best = {name: float("inf") for name in layers}
            for _ in range(3):
                for name, layer in layers.items():
                    t = time.perf_counter()
                    layer.search(Scope(f"locomo-{c.sample_id}"), q.question, k=10)
                    best[name] = min(best[name], (time.perf_counter() - t) * 1000)
            for name in layers:
                times[name].append(best[name])
out = {"command": "python paired_timing.py", "load_average": list(os.getloadavg()), "questions": len(times["plain"])}
for name, values in times.items():
    values = sorted(values)
    out[name] = {"p50_ms": round(statistics.median(values), 3), "p95_ms": round(values[int(0.95 * len(values))], 3),
                 "mean_ms": round(statistics.mean(values), 3)}
out["p95_ratio_plain_over_whole"] = round(out["plain"]["p95_ms"] / out["whole"]["p95_ms"], 3)
out["p50_ratio_plain_over_whole"] = round(out["plain"]["p50_ms"] / out["whole"]["p50_ms"], 3)
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out))
