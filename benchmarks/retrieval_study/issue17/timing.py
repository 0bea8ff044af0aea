"""Search latency on the pre-ingested LoCoMo and LongMemEval stores, for whichever memstrata is on the path."""
import json, shutil, statistics, sys, time
import memstrata
from memstrata.memory import Memory
from memstrata.bench import locomo_data as LCD, longmemeval_data as LD
from memstrata import SearchFilter
tag = sys.argv[1]
out = {'memstrata': memstrata.__file__}
for name, db in (('locomo', 'loc.db'), ('longmemeval', 'lme.db')):
    copy = f'/tmp/lab17/{tag}-{db}'
    shutil.copy(f'/tmp/lab17/{db}', copy)
    if name == 'locomo':
        qs = [(q.question, f"locomo-{c.sample_id}", None) for c in LCD.load('/work/shared/data/locomo/locomo-dev.json') for q in c.questions]
    else:
        qs = [(c.question, f"lme-{c.question_id}", LD.visible_until(c.asked_at)) for c in LD.load('/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz')]
    with Memory(store=f"sqlite:///{copy}", embedder='static', track_access=False) as m:
        for q, u, at in qs[:20]:
            m.search(q, scope=u, k=10, filters=SearchFilter(as_of=at))
        lat = []
        for _ in range(2):
            for q, u, at in qs:
                t = time.perf_counter(); m.search(q, scope=u, k=10, filters=SearchFilter(as_of=at)); lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    out[name] = {'p50': round(statistics.median(lat), 2), 'p95': round(lat[int(0.95 * len(lat))], 2), 'n': len(lat)}
print(json.dumps(out))
