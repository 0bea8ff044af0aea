"""Ingest once, then evaluate ranking variants quickly. Usage: lab.py ingest | lab.py eval 'HybridParams(...)' ..."""
import sys, json, time, statistics
from pathlib import Path
from memstrata.memory import Memory
from memstrata.core.retrieval import HybridParams
from memstrata.bench import longmemeval as L, longmemeval_data as LD, locomo as LC, locomo_data as LCD
LME = '/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz'
LOC = '/work/shared/data/locomo/locomo-dev.json'
D = Path(sys.argv[-1]) if len(sys.argv) > 1 and sys.argv[-1].startswith("/") else Path("/tmp/lab17")

def ingest():
    cases = LD.load(LME)
    with Memory(store=f"sqlite:///{D/'lme.db'}", embedder='static', track_access=False) as m:
        for c in cases: L.ingest(m, c, 'turn')
    convs = LCD.load(LOC)
    with Memory(store=f"sqlite:///{D/'loc.db'}", embedder='static', track_access=False) as m:
        for c in convs:
            m.store.erase_user(f"locomo-{c.sample_id}"); LC.ingest(m, c)

def ev(params, which='both', subset=None):
    out = {}
    if which in ('both','lme'):
        cases = LD.load(LME)
        with Memory(store=f"sqlite:///{D/'lme.db'}", embedder='static', track_access=False) as m:
            m._layers.semantic.params = params  # the study varies the ranking of one Memory
            rows=[]; lat=[]
            for c in cases:
                t=time.perf_counter(); r = L.search(m, c); lat.append((time.perf_counter()-t)*1000)
                rows.append(LD.score_case(c, r))
        s = L.summarize(cases, rows)
        half = [LD.mean_metrics(rows[i::2])['turn_recall@10'] for i in (0,1)]
        out['lme'] = {'t10': s['overall']['turn_recall@10'], 't50': s['overall']['turn_recall@50'], 'sall10': s['overall']['session_recall_all@10'],
                      'halves': half, 'types': {''.join(w[:2] for w in k.split('-')): v['turn_recall@10'] for k,v in s['by_type'].items()}, 'p95': round(sorted(lat)[int(.95*len(lat))],1)}
        out['lme_rows'] = {c.question_id: r for c, r in zip(cases, rows)}
    if which in ('both','loc'):
        convs = LCD.load(LOC)
        with Memory(store=f"sqlite:///{D/'loc.db'}", embedder='static', track_access=False) as m:
            m._layers.semantic.params = params  # the study varies the ranking of one Memory
            rows=[]; lat=[]; per={}
            for c in convs:
                for q in c.questions:
                    t=time.perf_counter(); hits = m.search(q.question, scope=f"locomo-{c.sample_id}", k=10); lat.append((time.perf_counter()-t)*1000)
                    r = LCD.evidence_recall(q.evidence, [h.memory.source_ids for h in hits], 10)
                    rows.append((q.category, r)); per.setdefault(c.sample_id, []).append(r)
        out['loc'] = {'r10': round(statistics.mean(r for _, r in rows),4), 'cats': {k: round(statistics.mean(r for c, r in rows if c==k),4) for k in '1234'},
                      'convs': {k: round(statistics.mean(v),3) for k,v in per.items()}, 'p95': round(sorted(lat)[int(.95*len(lat))],1)}
    return out

if __name__ == '__main__':
    if sys.argv[1] == 'ingest':
        ingest()
    else:
        which = sys.argv[2] if len(sys.argv) > 2 else 'both'
        for expr in sys.argv[3:] or ['HybridParams()']:
            p = eval(expr)
            r = ev(p, which); r.pop('lme_rows', None)
            print(expr, json.dumps(r), flush=True)
