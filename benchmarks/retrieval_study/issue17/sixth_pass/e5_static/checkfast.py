import sqlite3, sys, time, numpy as np
sys.path.insert(0, "/tmp/e5static")
import evalvar
from memstrata.embedders.static import StaticEmbedder
for bench in ("locomo", "lme"):
    conn = sqlite3.connect(evalvar.DB[bench])
    rows = conn.execute("SELECT content, embedding FROM memories ORDER BY rowid").fetchall()
    emb = StaticEmbedder("/tmp/e5static/models/shipped")
    t = time.perf_counter(); v = evalvar.fast_embed(bench, emb, [r[0] for r in rows]); t1 = time.perf_counter() - t
    t = time.perf_counter(); v2 = evalvar.fast_embed(bench, emb, [r[0] for r in rows]); t2 = time.perf_counter() - t
    stored = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    print(bench, v.shape, "exact equal to stored:", np.array_equal(v, stored), "maxdiff", float(np.abs(v - stored).max()), round(t1,1), round(t2,1))
