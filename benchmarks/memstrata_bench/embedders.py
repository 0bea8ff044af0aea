"""Measure the shipped embedders: load time, single-query latency, batch throughput, agreement with model2vec.

usage: python -m memstrata_bench.embedders OUT.json [--e5] [--locomo PATH] [--m2v-reference DIR]
* single query: median of 200 one-sentence calls (LoCoMo turn texts without the speaker), best of 3
  (e5: 50 calls, one run);
* batch: the first 1,024 LoCoMo dev turns ("Speaker: text") in unsorted batches of 64, best of 3
  (e5: the first 128 turns, one run: it does ~30 texts/s);
* bulk: every LoCoMo dev turn in one embed_documents call, best of 3 (static only);
* cosine vs model2vec: 200 turns (every 13th) encoded by model2vec 0.10.0's StaticModel.encode in a
  separate venv (DIR/ref200.npy + DIR/sample200.json), compared with StaticEmbedder row by row.
"""

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

LOCOMO = "../shared/data/locomo/locomo-dev.json"


def locomo_turns(path: str) -> list[str]:
    """Every turn as 'Speaker: text', sessions in order (the data is read by path, never copied)."""
    turns: list[str] = []
    for sample in json.loads(Path(path).read_text()):
        conversation = sample["conversation"]
        sessions = [k for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list)]
        for key in sorted(sessions, key=lambda k: int(k.split("_")[1])):
            turns.extend(f"{turn['speaker']}: {turn['text']}" for turn in conversation[key])
    return turns


def option(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def measure(make, turns, *, queries=200, batch_texts=1024, runs=3, bulk=True):
    t0 = time.perf_counter()
    emb = make()
    emb.embed_query("warm up")  # loads the weights
    load_s = time.perf_counter() - t0
    medians, p90s = [], []
    for _ in range(runs):
        single = []
        for q in [t.split(": ", 1)[1] for t in turns[:queries]]:
            t = time.perf_counter()
            emb.embed_query(q)
            single.append((time.perf_counter() - t) * 1000)
        medians.append(statistics.median(single))
        p90s.append(float(np.percentile(single, 90)))
    first = turns[:batch_texts]
    batch_rates = []
    for _ in range(runs):
        t = time.perf_counter()
        for i in range(0, len(first), 64):
            emb.embed_documents(first[i : i + 64])
        batch_rates.append(len(first) / (time.perf_counter() - t))
    result = {
        "name": emb.name,
        "dimensions": emb.dimensions,
        "load_s_incl_first_call": round(load_s, 3),
        f"single_query_ms_median_of_{queries}": round(min(medians), 3),
        f"single_query_ms_p90_of_{queries}": round(min(p90s), 3),
        "batch64_texts_per_s": round(max(batch_rates)),
        "batch64_texts": len(first),
        "batch64_runs": runs,
    }
    if bulk:
        rates = []
        for _ in range(3):
            t = time.perf_counter()
            emb.embed_documents(turns)
            rates.append(len(turns) / (time.perf_counter() - t))
        result |= {"bulk_texts_per_s_best_of_3": round(max(rates)), "bulk_texts": len(turns)}
    return emb, result


def cosine_vs_model2vec(emb, folder):
    if folder is None:
        return None
    ref_path, texts_path = Path(folder) / "ref200.npy", Path(folder) / "sample200.json"
    ref = np.load(ref_path)
    ours = emb.embed_documents(json.loads(texts_path.read_text()))
    cos = (ours * ref).sum(1) / np.linalg.norm(ref, axis=1)
    return {"texts": len(cos), "min": round(float(cos.min()), 7), "mean": round(float(cos.mean()), 7)}


def main():
    out = Path(sys.argv[1])
    turns = locomo_turns(option("--locomo", LOCOMO))
    load_avg = os.getloadavg()[0]
    from memstrata.embedders.static import DEFAULT_MODEL_DIR, StaticEmbedder

    static, result = measure(StaticEmbedder, turns)
    result["model_files_mib"] = round(sum(p.stat().st_size for p in DEFAULT_MODEL_DIR.iterdir()) / 2**20, 2)
    result["cosine_vs_model2vec_encode"] = cosine_vs_model2vec(static, option("--m2v-reference"))
    results = [result]
    if "--e5" in sys.argv:
        from memstrata.embedders.e5 import E5Embedder

        results.append(measure(E5Embedder, turns, queries=50, batch_texts=128, runs=1, bulk=False)[1])
    doc = {
        "benchmark": "embedders",
        "script": "python -m memstrata_bench.embedders",
        "method": __doc__.strip().splitlines()[3:],
        "data": "LoCoMo dev set, read by path, not shipped",
        "note": "2-core machine shared with other jobs; compare load_avg before trusting small differences",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "load_avg_1m_at_start": round(load_avg, 2),
        },
        "results": results,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
