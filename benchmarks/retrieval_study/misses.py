import random

from fusion import norm, ranked
from fusion_exp import speaker_boost
from harness import evidence_idx
from lab import convs, kw_lists

K = kw_lists("exp")
random.seed(3)
rows = []
for ci, c in enumerate(convs):
    ev = evidence_idx(c)
    for qi, q in enumerate(c.questions):
        rk = ranked(speaker_boost(ci, qi, norm(K[ci][qi][:50], "max"), 0.5))
        miss = [e for e in ev[qi] if e not in rk[:10]]
        if miss and q.category == 4:
            rows.append((c, q, miss, rk))
print(len(rows))
for c, q, miss, rk in random.sample(rows, 12):
    print("Q:", q.text, q.category)
    for e in miss:
        pos = rk.index(e) if e in rk else None
        print(f"   MISS (rank {pos}) {c.turns[e].dia_id} prev: {c.turns[e-1].text[:120]!r}")
        print(f"        own: {c.turns[e].text[:200]!r}")
    print("   top1:", c.turns[rk[0]].text[:150])
