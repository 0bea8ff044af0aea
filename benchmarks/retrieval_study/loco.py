"""Leave-one-conversation-out: pick the best grid setting on 4 conversations (mean R@10), score the 5th."""
import json
import sys

import numpy as np

g = json.load(open(f"cache/grid_{sys.argv[1] if len(sys.argv) > 1 else 'm2v'}.json"))
conv = np.array(g["conv_of"])
R = {k: (np.array(v[0]), np.array(v[1])) for k, v in g["results"].items()}
keys = list(R)
print("top settings by overall R@10:")
for k in sorted(keys, key=lambda k: -R[k][1].mean())[:15]:
    per = [R[k][1][conv == c].mean() for c in range(5)]
    print(f"  {k:<45} R@5 {R[k][0].mean():.3f} R@10 {R[k][1].mean():.3f}  per-conv " + " ".join(f"{x:.3f}" for x in per))
held = []
held_any = []
for c in range(5):
    tr = conv != c
    best = max(keys, key=lambda k: R[k][1][tr].mean())
    held.append(R[best][1][conv == c])
    print(f"held-out conv {c}: chose {best:<45} train {R[best][1][tr].mean():.3f} test {R[best][1][conv == c].mean():.3f}")
allq = np.concatenate(held)
print(f"LOCO R@10 (question-weighted over held-out convs) = {allq.mean():.3f}")
for fixed in sys.argv[2:]:
    print(f"fixed {fixed}: R@5 {R[fixed][0].mean():.3f} R@10 {R[fixed][1].mean():.3f} per-conv",
          " ".join(f"{R[fixed][1][conv == c].mean():.3f}" for c in range(5)))
