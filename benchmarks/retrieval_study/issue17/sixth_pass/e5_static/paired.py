"""Per-question paired comparison vs the shipped model (hybrid and semantic): wins/losses and a sign-flip bootstrap CI."""
import json, sys, numpy as np
rng = np.random.default_rng(0)
for bench, key in (("locomo", "r10"), ("lme", "turn_recall@10")):
    base = json.load(open(f"rows_{bench}_shipped.json"))
    for name in sys.argv[1:]:
        try: other = json.load(open(f"rows_{bench}_{name}.json"))
        except FileNotFoundError: continue
        for s in ("hybrid", "semantic"):
            a = np.array([r[key] for r in base[s] if key in r]); b = np.array([r[key] for r in other[s] if key in r])
            d = b - a
            boots = [rng.choice(d, len(d)).mean() for _ in range(2000)]
            lo, hi = np.percentile(boots, [2.5, 97.5])
            print(f"{bench:6} {s:8} {name:22} n={len(d)} delta={d.mean():+.4f} 95%CI[{lo:+.4f},{hi:+.4f}] better={int((d>0).sum())} worse={int((d<0).sum())}")
