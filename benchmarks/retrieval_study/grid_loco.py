"""Grid over expansion/boost/fusion settings; per-question R@5/R@10 saved; leave-one-conversation-out selection."""
import itertools
import json
import sys

import numpy as np

from bm25_expand import ctx_cols
from bm25_variants import q_base
from fusion import norm, ranked, weighted
from fusion_exp import speaker_boost
from harness import FTS, evidence_idx, recall_at
from lab import convs, dense_lists

DMODEL = sys.argv[1] if len(sys.argv) > 1 else "m2v"
DEPTH = 50
evs = [evidence_idx(c) for c in convs]
Dn = dense_lists(DMODEL, DEPTH)
conv_of = np.array([ci for ci, c in enumerate(convs) for _ in c.questions])

results = {}
for pn, wp, wn, wd in itertools.product((1, 2, 3), (0.3, 0.5, 0.7), (0.0, 0.2), (0.0, 0.5, 1.0)):
    weights = [1, wp] + ([wn] if wn else []) + ([wd] if wd else [])
    K = []
    for c in convs:
        f = FTS(ctx_cols(pn, bool(wn), bool(wd))(c), weights)
        K.append([f.search(q_base(c, q.text), DEPTH) for q in c.questions])
    for beta, wdense in itertools.product((0.0, 0.3, 0.5, 1.0), (0.0, 0.1, 0.2, 0.3)):
        r5, r10 = [], []
        for ci, c in enumerate(convs):
            for qi in range(len(c.questions)):
                if wdense:
                    sc = weighted({"d": Dn[ci][qi], "k": K[ci][qi]}, {"d": wdense, "k": 1 - wdense}, "minmax")
                else:
                    sc = norm(K[ci][qi], "max")
                rk = ranked(speaker_boost(ci, qi, sc, beta))
                r5.append(recall_at(rk, evs[ci][qi], 5))
                r10.append(recall_at(rk, evs[ci][qi], 10))
        key = f"prev{pn} wp{wp} wn{wn} wd{wd} spk{beta} dense{wdense}"
        results[key] = (r5, r10)
    print(key, np.mean(r10), flush=True)

json.dump({"conv_of": conv_of.tolist(), "results": results}, open(f"cache/grid_{DMODEL}.json", "w"))
