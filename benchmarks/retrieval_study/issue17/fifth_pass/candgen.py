"""Scratch lab, issue 17 fifth pass: e5 as a third candidate list on LoCoMo (candidate generation).

    python candgen.py      # needs cands_locomo.pkl (capture.py, e5cache.py) and e5docs_locomo.npz, locomo4.db

For each question, the e5 (plain question) top 50 over every turn of its conversation joins the union of the
keyword and static-vector top 50. Reports (1) how many evidence turns the union holds at 50 before and
after, and how many of the turns missed at 10 that were in neither list now enter; (2) R@10 of
`default score / best + beta * minmax(e5 over the enlarged candidates)` (new candidates have default score 0),
with beta chosen leave-one-conversation-out. LoCoMo only: LongMemEval's 46,879 turns were not embedded with
e5 (about 3 h at this machine's rate). Results to `candgen_results.json`.
"""

import json
import pickle
import sqlite3
import statistics as st

import numpy as np

from ltr import base_order, locomo_r10
from memstrata.core.retrieval import without_names
from memstrata.embedders.base import normalize_rows
from memstrata.embedders.e5 import E5Embedder

BETAS = (0.0, 0.1, 0.25, 0.5, 1.0)


def main():
    qs = pickle.load(open("cands_locomo.pkl", "rb"))
    docs = dict(np.load("e5docs_locomo.npz"))
    rows = sqlite3.connect("locomo4.db").execute("SELECT user_id, id, source_ids FROM memories").fetchall()
    by_user: dict[str, list] = {}
    for user, mid, src in rows:
        if mid in docs:
            by_user.setdefault(user, []).append((mid, json.loads(src)))
    print("turns with e5 vectors:", sum(len(v) for v in by_user.values()), "of", len(rows))
    matrices = {u: np.stack([docs[m] for m, _ in v]) for u, v in by_user.items()}
    engine = E5Embedder()._load_locked()
    queries = normalize_rows(engine.query([without_names(q["query"], q["named"]) for q in qs]))
    cover_before = cover_after = new_missed = missed_outside = 0
    per_beta = {b: [] for b in BETAS}
    for q, qv in zip(qs, queries, strict=True):
        user = f"locomo-{q['group']}"
        sims = matrices[user] @ qv
        top = np.argsort(-sims)[:50]
        e5_top = {by_user[user][i][0]: (float(sims[i]), by_user[user][i][1]) for i in top}
        known = {c["id"] for c in q["cands"]}
        ev = set(q["evidence"])
        before = {e for c in q["cands"] if (c["kw_rank"] is not None or c["vec_rank"] is not None)
                  for e in c["prov"] if e in ev}
        after = before | {e for _, (_, prov) in e5_top.items() for e in prov if e in ev}
        cover_before += len(before)
        cover_after += len(after)
        top10 = {e for i in base_order(q)[:10] for e in q["cands"][i]["prov"]}
        outside = ev - before - top10
        missed_outside += len(outside)
        new_missed += len(outside & after)
        # enlarged candidate set: default candidates plus e5's top 50
        cands = [(c["id"], c["base_score"], c["e5_plain"], c["prov"]) for c in q["cands"]]
        cands += [(m, 0.0, s, prov) for m, (s, prov) in e5_top.items() if m not in known]
        best = max(c[1] for c in cands) or 1.0
        e5s = np.asarray([c[2] for c in cands])
        norm = (e5s - e5s.min()) / (e5s.max() - e5s.min() + 1e-12)
        for b in BETAS:
            scores = np.asarray([c[1] / best for c in cands]) + b * norm
            order = np.argsort(-scores, kind="stable")
            per_beta[b].append(locomo_r10({"evidence": q["evidence"], "cands": [{"prov": c[3]} for c in cands]}, order))
    convs = sorted({q["group"] for q in qs})
    loco, picks = [0.0] * len(qs), []
    for conv in convs:
        train = [i for i, q in enumerate(qs) if q["group"] != conv]
        pick = max(BETAS, key=lambda b: st.mean(per_beta[b][i] for i in train))
        picks.append(pick)
        for i, q in enumerate(qs):
            if q["group"] == conv:
                loco[i] = per_beta[pick][i]
    out = {
        "evidence_turns_in_union_top50": {"before": cover_before, "after": cover_after},
        "evidence_outside_both_lists_and_top10": missed_outside, "of_those_in_e5_top50": new_missed,
        "r10_by_beta": {str(b): round(st.mean(v), 4) for b, v in per_beta.items()},
        "loco": round(st.mean(loco), 4), "loco_picks": picks,
        "by_category_by_beta": {str(b): [round(st.mean(v[i] for i, q in enumerate(qs) if q["cat"] == c), 3)
                                         for c in "1234"] for b, v in per_beta.items()},
        "loco_by_category": [round(st.mean(loco[i] for i, q in enumerate(qs) if q["cat"] == c), 3) for c in "1234"],
        "by_conversation_by_beta": {str(b): [round(st.mean(v[i] for i, q in enumerate(qs) if q["group"] == c), 3)
                                             for c in convs] for b, v in per_beta.items()},
    }
    print(json.dumps(out, indent=1))
    json.dump(out, open("candgen_results.json", "w"), indent=1)


if __name__ == "__main__":
    main()
