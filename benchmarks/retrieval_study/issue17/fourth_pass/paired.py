"""Search time of several memstrata versions in one process, per LoCoMo question alternating, fastest of 3.

Usage: paired.py OUT_JSON PKG=DB [PKG=DB ...]. Each PKG is a copy of a version's `memstrata` package renamed
(e.g. `cp -r SRC/memstrata /tmp/pkgs/memstrata_9d012d8`; the package imports itself relatively) and on
PYTHONPATH; each DB is a store that version's `ingest.py` wrote. Every version sees the same moment of the
machine's load for every question, so the ratios hold on a shared machine where separate runs do not.
Searches go through `Memory.search` as `bench locomo` makes them (k=10, access tracking on). Also records
each version's top 10 (the turns' dia_ids), so the rankings can be compared."""
import importlib, json, os, statistics, sys, time

DATA = os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo-dev.json")
REPEAT = int(os.environ.get("REPEAT", "3"))
WARM = os.environ.get("WARM", "1") == "1"
"""WARM=0: no warm-up pass, so each version's first search of a user and first read of a text count, as in
`bench locomo` (use with REPEAT=1, or the fastest of the repeats hides them)."""
versions = [arg.split("=", 1) for arg in sys.argv[2:]]
mods = {pkg: importlib.import_module(f"{pkg}.memory") for pkg, _ in versions}
load = importlib.import_module(f"{versions[0][0]}.bench.locomo_data").load
questions = [(f"locomo-{c.sample_id}", q.question) for c in load(DATA) for q in c.questions]
memories = {pkg: mods[pkg].Memory(store=db, embedder="static") for pkg, db in versions}
times = {pkg: [] for pkg, _ in versions}
tops = {pkg: [] for pkg, _ in versions}
for user, q in questions if WARM else ():  # warm-up: every version learns its users' speakers, caches fill
    for pkg, m in memories.items():
        m.search(q, scope=user, k=10)
for n, (user, q) in enumerate(questions):
    best = dict.fromkeys(memories, float("inf"))
    for r in range(REPEAT):
        order = list(memories) if (n + r) % 2 == 0 else list(reversed(memories))
        for pkg in order:
            t = time.perf_counter()
            hits = memories[pkg].search(q, scope=user, k=10)
            best[pkg] = min(best[pkg], (time.perf_counter() - t) * 1000)
            if r == 0:
                tops[pkg].append([list(h.memory.source_ids) for h in hits])
    for pkg in memories:
        times[pkg].append(best[pkg])
for m in memories.values():
    m.close()


def pct(values, q):
    values = sorted(values)
    return round(values[int(q * len(values))], 3)


first = versions[0][0]
out = {"command": "paired.py " + " ".join(sys.argv[2:]), "repeat": REPEAT, "warm": WARM, "questions": len(questions),
       "load_average_end": [round(x, 2) for x in os.getloadavg()]}
for pkg, _ in versions:
    v = times[pkg]
    out[pkg] = {"p50_ms": pct(v, 0.5), "p95_ms": pct(v, 0.95), "mean_ms": round(statistics.mean(v), 3),
                f"p95_over_{first}": round(pct(v, 0.95) / pct(times[first], 0.95), 3),
                f"p50_over_{first}": round(pct(v, 0.5) / pct(times[first], 0.5), 3),
                f"same_top10_as_{first}": sum(a == b for a, b in zip(tops[pkg], tops[first]))}
json.dump({**out, "tops": tops, "times": times}, open(sys.argv[1], "w"))
print(json.dumps(out, indent=1))
