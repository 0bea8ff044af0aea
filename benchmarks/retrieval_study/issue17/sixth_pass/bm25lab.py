"""Lab: BM25's k1 and b, and Lucene's IDF ln(1 + (N - n + 0.5) / (n + 0.5)) instead of FTS5's
(floored at 1e-6), on both lab stores. Usage: bm25lab.py K1,B,fts|lucene ..."""
import json, math, sys
from memstrata.core import bm25
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fourth_pass"))
import lab4  # noqa: E402  (the lab stores and scoring of the fourth pass)
orig_idf = bm25.idf
def lucene(total, documents):
    return math.log(1 + (total - documents + 0.5) / (documents + 0.5))
for spec in sys.argv[1:]:
    k1, b, kind = spec.split(",")
    bm25.K1, bm25.B = float(k1), float(b)
    bm25.idf = lucene if kind == "lucene" else orig_idf
    res = {}
    for bench in ("locomo", "lme"):
        with lab4.open_memory(bench) as m:
            rows, out = (lab4.score_locomo if bench == "locomo" else lab4.score_lme)(m)
        out.pop("conv", None); res[bench] = out
    print(spec, json.dumps(res), flush=True)
