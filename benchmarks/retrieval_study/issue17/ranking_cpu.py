"""CPU time of the ranking step (everything after the store read) per search, for the memstrata in argv[1].

Usage: ranking_cpu.py SRC TAG LAB_DIR OUT_JSON. LAB_DIR holds loc.db / lme.db as `lab.py ingest LAB_DIR` writes
them. Each question's candidates are read once, then the ranking is timed five times and the fastest kept,
so the figure is the ranking's own cost with little scheduler noise. Run the two versions at the same time."""
import sys
sys.path.insert(0, sys.argv[1])
import json, time, shutil
import memstrata
from memstrata.memory import Memory
from memstrata.layers import semantic as S
from memstrata.layers.semantic import Strategy
from memstrata.storage.base import MemoryFilter
from memstrata.core.text import words
from memstrata.bench import locomo_data as LCD, longmemeval_data as LD
out = {'src': memstrata.__file__}
lab = sys.argv[3]
for name, db in (('locomo', 'loc.db'), ('longmemeval', 'lme.db')):
    copy = f'{lab}/rankcpu-{sys.argv[2]}-{db}'
    shutil.copy(f'{lab}/{db}', copy)
    if name == 'locomo':
        qs = [(q.question, f"locomo-{c.sample_id}", None) for c in LCD.load('/work/shared/data/locomo/locomo-dev.json') for q in c.questions]
    else:
        qs = [(c.question, f"lme-{c.question_id}", LD.visible_until(c.asked_at)) for c in LD.load('/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz')]
    with Memory(store=f"sqlite:///{copy}", embedder='static', track_access=False) as m:
        layer = m._layers.semantic  # the study times the layer's ranking step on fixed candidates
        params = layer.params
        mins = []
        for q, u, at in qs:
            now = at or m.clock()
            where = MemoryFilter(as_of=now)
            vec = m.embedder.embed_query(q)
            sem, kw = m.store.hybrid_candidates(u, vec, q, where, limit=50)
            named = [w.casefold() for w in words(q)]
            best = float('inf')
            for _ in range(5):
                t = time.perf_counter()
                if hasattr(S, '_query_windows'):
                    w = S._query_windows(q, now, params)
                    S._rank(Strategy.HYBRID, q, sem, kw, now=now, decay_rate=0.01, params=params, named=named, windows=w)
                else:
                    S._rank(Strategy.HYBRID, q, sem, kw, now=now, decay_rate=0.01, params=params, named=named)
                best = min(best, (time.perf_counter() - t) * 1000)
            mins.append(best)
    mins.sort()
    out[name] = {'p50': round(mins[len(mins) // 2], 3), 'p95': round(mins[int(0.95 * len(mins))], 3), 'mean': round(sum(mins) / len(mins), 3), 'n': len(mins)}
out['tag'] = sys.argv[2]
with open(sys.argv[4], 'w') as f:
    json.dump(out, f)
print(json.dumps(out))
