"""Scratch lab, issue 17 fifth pass: e5 as a second-stage re-scorer of the default ranking's top N.

    python rescore.py       # needs cands_locomo.pkl / cands_lme.pkl with e5 similarities (e5cache.py)

For each question the default ranking's top N candidates are re-scored as
    default score / best default score + beta * minmax(e5 similarity over those N)
and ranked by it (the rest keep their order below them). `QUERY=plain` uses the question without the
speakers' names it names. Grid N x beta; LoCoMo R@10 by category and conversation, leave-one-conversation-out
(N, beta chosen on four conversations, scored on the fifth), LongMemEval turn R@10 by type at every point.
Results to `rescore_results.json`.
"""

import json
import os
import pickle

import numpy as np
from ltr import LME, base_order, lme_row, locomo_r10, summary_lme, summary_locomo

from memstrata.bench.longmemeval_data import load as load_lme

KEY = "e5_plain" if os.environ.get("QUERY") == "plain" else "e5"
NS = [int(n) for n in os.environ.get("NS", "20,30,50").split(",")]
"""LongMemEval's e5 similarities exist for the default's top 20 only (e5cache.py TOP=20): run it with NS=20."""
GRID = [(n, b) for n in NS for b in (0.25, 0.5, 1.0, 2.0, 4.0)]


def rescored(q, n, beta, key=KEY):
    order = base_order(q)
    head, tail = order[:n], order[n:]
    cands = q["cands"]
    top = cands[head[0]]["base_score"] or 1.0
    sims = np.asarray([cands[i][key] for i in head])
    span = sims.max() - sims.min()
    norm = (sims - sims.min()) / span if span > 1e-12 else np.ones_like(sims)
    scores = np.asarray([cands[i]["base_score"] / top for i in head]) + beta * norm
    return [head[j] for j in np.argsort(-scores, kind="stable")] + tail


def main():
    loc = pickle.load(open("cands_locomo.pkl", "rb"))
    lme = pickle.load(open("cands_lme.pkl", "rb"))
    cases = {c.question_id: c for c in load_lme(LME)}
    lme = [q for q in lme if q["qid"] in cases and KEY in q["cands"][0]]  # none until e5cache.py lme ran
    lme_cases = [cases[q["qid"]] for q in lme]
    print(len(lme), "LongMemEval questions with e5 similarities")
    convs = sorted({q["group"] for q in loc})
    per = {}
    out = {"key": KEY, "grid": {}}
    base = [locomo_r10(q, base_order(q)) for q in loc]
    for n, beta in GRID:
        r10 = [locomo_r10(q, rescored(q, n, beta)) for q in loc]
        rows = [lme_row(q, c, rescored(q, n, beta)) for q, c in zip(lme, lme_cases, strict=True)]
        lme_summary = summary_lme(lme, rows) if lme else {}
        per[(n, beta)] = r10
        out["grid"][f"N={n} beta={beta}"] = {"locomo": summary_locomo(loc, r10), "lme": lme_summary}
        print(f"N={n} beta={beta}", json.dumps(out["grid"][f"N={n} beta={beta}"]), flush=True)
    # leave-one-conversation-out over the grid plus "off" (the default ranking)
    per[("off", 0)] = base
    loco, picks = [0.0] * len(loc), []
    for conv in convs:
        train = [i for i, q in enumerate(loc) if q["group"] != conv]
        best = max(per, key=lambda k: np.mean([per[k][i] for i in train]))
        picks.append(f"{best[0]}/{best[1]}")
        for i, q in enumerate(loc):
            if q["group"] == conv:
                loco[i] = per[best][i]
    out["loco"] = {"summary": summary_locomo(loc, loco), "picks": picks}
    print("LOCO", json.dumps(out["loco"]))
    json.dump(out, open(f"rescore_results_{KEY}_N{'-'.join(map(str, NS))}.json", "w"), indent=1)


if __name__ == "__main__":
    main()
