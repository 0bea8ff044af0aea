"""The 100k-memories-in-one-user point, versions timed per query alternating in one process (as `paired.py`
does for LoCoMo): one store of 100,000 synthetic memories of one user (`bench latency`'s corpus: seed 7,
batches of 1,000, written with the first version; the SQLite schema is the same in 9d012d8 and main, so the
file is copied for the others), 200 queries made as `bench latency` makes them, fastest of 3 per version.

Usage: paired_100k.py OUT_JSON PKG [PKG ...] (renamed package copies on PYTHONPATH)."""
import importlib, json, os, shutil, statistics, sys, tempfile, time

import numpy as np

out_path, pkgs = sys.argv[1], sys.argv[2:]
L = importlib.import_module(f"{pkgs[0]}.bench.latency")
Mem = {p: importlib.import_module(f"{p}.memory").Memory for p in pkgs}
NewMemory = importlib.import_module(f"{pkgs[0]}.layers.semantic").NewMemory
rng = np.random.default_rng(7)
words = L.model_vocabulary()
weights = L.zipf_weights(len(words))
tmp = tempfile.mkdtemp()
first = os.path.join(tmp, f"{pkgs[0]}.db")
samples = []
with Mem[pkgs[0]](store=first, embedder="static", track_access=False) as m:
    for _ in range(100):
        texts = L.synthetic_texts(rng, words, weights, 1000)
        m.add_many([NewMemory(content=t) for t in texts], scope="bench-user", dedupe=False)
        samples.extend(t for t in texts if rng.random() < 0.01)
for p in pkgs[1:]:
    shutil.copy(first, os.path.join(tmp, f"{p}.db"))
queries = [L.make_query(rng, t, words) for t in samples[:210]]
memories = {p: Mem[p](store=os.path.join(tmp, f"{p}.db"), embedder="static") for p in pkgs}
for q in queries[:10]:  # warm-up, as `bench latency`'s first searches
    for m in memories.values():
        m.search(q, scope="bench-user", k=10)
times = {p: [] for p in pkgs}
for n, q in enumerate(queries[10:]):
    best = dict.fromkeys(pkgs, float("inf"))
    for r in range(3):
        for p in pkgs if (n + r) % 2 == 0 else reversed(pkgs):
            t = time.perf_counter()
            memories[p].search(q, scope="bench-user", k=10)
            best[p] = min(best[p], (time.perf_counter() - t) * 1000)
    for p in pkgs:
        times[p].append(best[p])
for m in memories.values():
    m.close()
shutil.rmtree(tmp)


def pct(values, q):
    values = sorted(values)
    return round(values[int(q * len(values))], 3)


out = {"command": "paired_100k.py " + " ".join(pkgs), "queries": len(times[pkgs[0]]),
       "load_average_end": [round(x, 2) for x in os.getloadavg()]}
for p in pkgs:
    out[p] = {"p50_ms": pct(times[p], 0.5), "p95_ms": pct(times[p], 0.95), "mean_ms": round(statistics.mean(times[p]), 3),
              f"p95_over_{pkgs[0]}": round(pct(times[p], 0.95) / pct(times[pkgs[0]], 0.95), 3),
              f"p50_over_{pkgs[0]}": round(pct(times[p], 0.5) / pct(times[pkgs[0]], 0.5), 3)}
json.dump(out, open(out_path, "w"), indent=1)
print(json.dumps(out, indent=1))
