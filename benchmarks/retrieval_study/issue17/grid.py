import json, itertools
from lab import ev
from memstrata.core.retrieval import HybridParams
out = {'lme': {}, 'loc': {}}
for vw, rb in itertools.product((0.2, 0.3, 0.4), (0.0, 1.0, 2.0, 4.0)):
    r = ev(HybridParams(vector_weight=vw, role_boost=rb), 'lme')
    out['lme'][f"vw={vw},rb={rb}"] = {'t10': r['lme']['t10'], 'halves': r['lme']['halves'], 'rows': {q: x.get('turn_recall@10') for q, x in r['lme_rows'].items()}}
    print('lme', vw, rb, r['lme']['t10'], r['lme']['halves'], flush=True)
for vw, tb in itertools.product((0.2, 0.3, 0.4), (0.0, 1.0)):
    r = ev(HybridParams(vector_weight=vw, time_boost=tb), 'loc')
    out['loc'][f"vw={vw},tb={tb}"] = r['loc']
    print('loc', vw, tb, r['loc']['r10'], r['loc']['convs'], flush=True)
json.dump(out, open('/tmp/lab17/grid.json', 'w'))
