"""The ranking's share of a LoCoMo search, by kind of question, for one memstrata version from da40deb on (a renamed package
copy, as for `paired.py`): per question the store read (`_candidates`), the query's periods and the ranking
(`_rank`) timed apart, fastest of 3, and the ranking again with the time-aware parts off (no periods, no
"when" boost), so their cost shows by kind of question: naming a period, asking "when", neither.

Usage: components.py PKG DB OUT_JSON [cold]. With `cold`, no warm-up pass: what the layer remembers across
searches (speakers, time cues) is learnt during the timed pass, as in `bench locomo`."""
import importlib, json, os, statistics, sys, time

pkg, db, out_path = sys.argv[1:4]
cold = len(sys.argv) > 4 and sys.argv[4] == "cold"
M = importlib.import_module(f"{pkg}.memory")
S = importlib.import_module(f"{pkg}.layers.semantic")
T = importlib.import_module(f"{pkg}.core.temporal")
R = importlib.import_module(f"{pkg}.core.retrieval")
Scope = importlib.import_module(f"{pkg}.models").Scope
MemoryFilter = importlib.import_module(f"{pkg}.storage.base").MemoryFilter
words = importlib.import_module(f"{pkg}.core.text").words
load = importlib.import_module(f"{pkg}.bench.locomo_data").load
questions = [(f"locomo-{c.sample_id}", q.question) for c in load(os.environ.get(
    "LOCOMO", "/work/shared/data/locomo/locomo-dev.json")) for q in c.questions]
rows = []
with M.Memory(store=db, embedder="static", track_access=False) as m:
    layer = m._layers.semantic
    for user, q in questions if not cold else ():
        m.search(q, scope=user, k=10)
    base = R.HybridParams(when_boost=0.0)
    for user, q in questions:
        now = m.clock()
        where = MemoryFilter(as_of=now)
        best: dict[str, float] = {}

        def timed(name, fn):
            t = time.perf_counter()
            result = fn()
            best[name] = min(best.get(name, float("inf")), (time.perf_counter() - t) * 1000)
            return result

        for _ in range(3):
            sem, kw = timed("candidates", lambda: layer._candidates(Scope(user), q, S.Strategy.HYBRID, where, 50))
            windows = timed("query_periods", lambda: S._query_windows(q, now, layer.params))
            named = frozenset(w.casefold() for w in words(q))
            extra = {"cues": layer._time_cues} if hasattr(layer, "_time_cues") else {}
            timed("rank", lambda: S._rank(S.Strategy.HYBRID, q, sem, kw, now=now, decay_rate=0.01,
                                          params=layer.params, named=named, windows=windows, **extra))
            timed("rank_without_time", lambda: S._rank(S.Strategy.HYBRID, q, sem, kw, now=now, decay_rate=0.01,
                                                       params=base, named=named, windows=[]))
        rows.append({"period": bool(windows), "when": T.asks_when(q), **best})


def pct(values, q):
    values = sorted(values)
    return round(values[int(q * len(values))], 3)


out = {"src": M.__file__, "db": db, "cold": cold, "load_average_end": [round(x, 2) for x in os.getloadavg()]}
for name in ("candidates", "query_periods", "rank", "rank_without_time"):
    v = [r[name] for r in rows]
    out[name] = {"mean_ms": round(statistics.mean(v), 3), "p50_ms": pct(v, 0.5), "p95_ms": pct(v, 0.95)}
kinds = {"names a period": lambda r: r["period"], "asks when": lambda r: r["when"] and not r["period"],
         "neither": lambda r: not r["period"] and not r["when"]}
for label, chosen in kinds.items():
    sub = [r for r in rows if chosen(r)]
    out[label] = {"questions": len(sub), "rank_mean_ms": round(statistics.mean(r["rank"] for r in sub), 3),
                  "time_aware_mean_ms": round(statistics.mean(r["rank"] - r["rank_without_time"] for r in sub), 3),
                  "rank_p95_ms": pct([r["rank"] for r in sub], 0.95)}
json.dump(out, open(out_path, "w"), indent=1)
print(json.dumps(out, indent=1))
