"""Per-variant LoCoMo dev recall@10 (overall, per category, per conversation) from the lab's per-question rows,
and leave-one-conversation-out estimates of choosing among variants (memstrata.bench.heldout.held_out)."""
import json, statistics as st, sys
from memstrata.bench.heldout import held_out
V = [
 ("before: whole query in both lists (da40deb)", "rows_base.json", "none"),
 ("**plain vector query (kept, default)**", "rows_noname.json", "none"),
 ("plain vector query, keyword query without the names too", "rows_noname_also_kwTrue.json", "none"),
 ("plain vector query of content words only (stopwords dropped)", "rows_vecq_mode'terms'.json", "none"),
 ("plain vector query, vector weight 0.4", "rows_noname2_vw0.4.json", "none"),
 ("plain vector query, depth 100 for both lists", "rows_deep_depth100.json", "none"),
 ("session evidence 0.1 (whole query)", "rows_session2_lam0.1.json", "none"),
 ("session evidence 0.2 (whole query)", "rows_session_ev_lam0.2.json", "none"),
 ("session evidence 0.3 (whole query)", "rows_session2_lam0.3.json", "none"),
 ("session evidence 0.5 (whole query)", "rows_session2_lam0.5.json", "none"),
 ("session evidence, mean of the session's best 2, 0.2", "rows_session_ev_lam0.2_top2.json", "none"),
 ("plain vector query + session evidence 0.2", "rows_noname2_post0.2.json", "none"),
 ("plain vector query, vector weight 0.4 + session evidence 0.2", "rows_noname2_vw0.4_post0.2.json", "none"),
 ("embedding Rocchio: query + 0.3 x centroid of the top 5, second vector search", "rows_rocchio_beta0.3.json", "none"),
 ("embedding Rocchio, 0.5 x top 5", "rows_rocchio_beta0.5.json", "none"),
 ("embedding Rocchio, 0.5 x top 3", "rows_rocchio_beta0.5_m_docs3.json", "none"),
 ("embedding Rocchio, 0.5 x top 10", "rows_rocchio_beta0.5_m_docs10.json", "none"),
 ("embedding Rocchio, 1.0 x top 5", "rows_rocchio_beta1.0.json", "none"),
 ("embedding Rocchio 0.5 x top 5, re-scoring the candidates only", "rows_rocchio_beta0.5_pool_onlyTrue.json", "none"),
 ("embedding Rocchio 0.5 + session evidence 0.2", "rows_combo_lam0.2.json", "none"),
 ("plain vector query + Rocchio 0.5 + session evidence 0.2", "rows_noname2_beta0.5_post0.2.json", "none"),
 ("RM3-style keyword feedback: 10 terms of the top 5 as a third list, weight 0.3", "rows_kwprf_gamma0.3.json", "none"),
 ("RM3-style keyword feedback, third list weight 0.15", "rows_kwprf_gamma0.15.json", "none"),
 ("RM3-style keyword feedback on the plain-query default, weight 0.2", "rows_kwprf_gamma0.2.json", "none"),
 ("RM3-style keyword feedback: the 10 terms appended to the query", "rows_kwprf_mode'append'.json", "none"),
 ("adjacent-turn redundancy penalty 0.3 (within 2 turns)", "rows_adjacent_pen0.3.json", "none"),
 ("adjacent-turn redundancy penalty 0.15 (within 1 turn)", "rows_adjacent_pen0.15_span1.json", "none"),
]
out = {}
for label, f, _ in V:
    rows = json.load(open(f))
    r = [x["r10"] for x in rows]
    convs = sorted({x["conv"] for x in rows})
    out[label] = {"file": f, "recall@10": round(st.mean(r), 4),
                  **{f"c{c}": round(st.mean(x["r10"] for x in rows if x["cat"] == c), 4) for c in "1234"},
                  "per_conversation": {c: round(st.mean(x["r10"] for x in rows if x["conv"] == c), 4) for c in convs},
                  "scores": r}
folds = [x["conv"] for x in json.load(open("rows_base.json"))]
def loco(labels):
    return held_out({l: out[l]["scores"] for l in labels}, folds)
res = {"variants": {l: {k: v for k, v in d.items() if k != "scores"} for l, d in out.items()},
       "loco_plain_vs_whole": loco([V[1][0], V[0][0]]),
       "loco_all_variants": loco([v[0] for v in V])}
json.dump(res, open(sys.argv[1], "w"), indent=1)
for l, d in res["variants"].items():
    pc = " / ".join(f"{v:.3f}" for v in d["per_conversation"].values())
    print(f"| {l} | {d['recall@10']:.4f} | {d['c1']:.3f} / {d['c2']:.3f} / {d['c3']:.3f} / {d['c4']:.3f} | {pc} |")
print(res["loco_plain_vs_whole"]["estimate"], [f["chosen"][:20] for f in res["loco_plain_vs_whole"]["folds"]])
print(res["loco_all_variants"]["estimate"], [f["chosen"][:40] for f in res["loco_all_variants"]["folds"]])
