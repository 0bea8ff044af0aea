import json, os, sys, statistics as st
from dataclasses import replace
from memstrata.memory import Memory
from memstrata.core.retrieval import HybridParams
from memstrata.bench import heldout
settings = {}
for sw in (0.2, 0.1, 0.0):
    for plain in (True, False):
        settings[f"sw{sw}-plain{int(plain)}"] = replace(HybridParams(), session_weight=sw, plain_vector_query=plain)
which = sys.argv[1]
with Memory(store=f"./grid_{which}.db", embedder="static", track_access=False) as m:
    if which == "lme":
        scores, types, halves = heldout.longmemeval_scores(m, os.environ.get("LONGMEMEVAL", "longmemeval_s_dev100.json.gz"), settings)
        for label, v in scores.items():
            by = {t: round(st.mean(x for x, tt in zip(v, types) if tt == t), 3) for t in sorted(set(types))}
            print(label, round(st.mean(v), 4), by, flush=True)
    else:
        scores, folds = heldout.locomo_scores(m, os.environ.get("LOCOMO", "locomo-dev.json"), settings)
        for label, v in scores.items(): print(label, round(st.mean(v), 4), flush=True)
    json.dump({"scores": scores}, open(f"./grid_{which}.json", "w"))
