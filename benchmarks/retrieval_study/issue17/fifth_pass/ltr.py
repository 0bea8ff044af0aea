"""Scratch lab, issue 17 fifth pass: a learned fusion of the hybrid candidates (learning to rank).

    python ltr.py [FEATURESET ...]      # needs cands_locomo.pkl and cands_lme.pkl from capture.py (cwd)

For each question the candidates are the union of both lists' top 50 (as `hybrid_rank` sees them). A linear
score w . x over per-candidate features is fitted by pairwise logistic regression (RankNet with a linear
scorer, Newton's method, L2), every (evidence, non-evidence) pair of a question, each question weighted
equally. Evaluated:

* LoCoMo leave-one-conversation-out (fit on 4 conversations, rank the 5th), R@10 by category / conversation;
* LongMemEval scored with the weights fitted on all of LoCoMo (no refit), turn R@10 by type;
* the reverse (fit on LongMemEval, rank LoCoMo), and a joint fit with grouped CV (10 folds: the 5 LoCoMo
  conversations and 5 LongMemEval folds by question index), each benchmark scored on its held-out folds.

The default ranking (`base`) is reproduced from the captured scores. Results to `ltr_results.json`.
"""

import json
import os
import pickle
import statistics as st
import sys

import numpy as np

from memstrata.bench.locomo_data import evidence_recall
from memstrata.bench.longmemeval_data import load as load_lme
from memstrata.bench.longmemeval_data import score_case

LME = "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz"
PRIOR = os.environ.get("PRIOR") or None  # "base": shrink towards the default ranking
LME_WEIGHT = float(os.environ.get("LME_WEIGHT", "1"))  # weight of a LongMemEval question in the joint fit
E5_TOP = int(os.environ.get("E5_TOP", "20"))  # e5 similarities of the default ranking's top E5_TOP only
L2S = [float(x) for x in os.environ.get("L2", "1").split(",")]
QWORDS = ("what", "when", "who", "how", "why", "where", "which", "did", "is", "does", "would")


def session_features(cands, order):
    """Per candidate: facts about its session relative to the default ranking's best candidates."""
    top = [cands[i] for i in order[:3]]
    best_by_session: dict = {}
    top10_by_session: dict = {}
    for rank, i in enumerate(order):
        c = cands[i]
        best_by_session.setdefault(c["session"], c["base_score"])
        if rank < 10:
            top10_by_session[c["session"]] = top10_by_session.get(c["session"], 0) + 1
    out = []
    for c in cands:
        dist = [abs(c["turn"] - t["turn"]) for t in top if t["session"] == c["session"]
                and c["turn"] is not None and t["turn"] is not None and t is not c]
        out.append((
            float(c["session"] == top[0]["session"]) if top else 0.0,
            best_by_session[c["session"]],
            top10_by_session.get(c["session"], 0) / 10.0,
            1.0 / (1.0 + min(dist)) if dist else 0.0,
            float(bool(dist) and min(dist) == 1),
        ))
    return out


def features(q, featureset):
    """The feature matrix of one question's candidates (rows in capture order)."""
    cands = q["cands"]
    order = sorted(range(len(cands)), key=lambda i: cands[i]["base_rank"])
    top_score = max(c["base_score"] for c in cands) or 1.0
    kw_top = max((c["kw_raw"] for c in cands if c["kw_raw"] is not None), default=1.0) or 1.0
    vec_top = max((c["vec_raw"] for c in cands if c["vec_raw"] is not None), default=0.0)
    sess = session_features(cands, order)
    first = q["query"].split()[0].casefold() if q["query"].split() else ""
    qtype = [float(first == w) for w in QWORDS]
    e5 = {}
    if "e5" in featureset:
        for key in ("e5", "e5_plain"):
            sims = np.asarray([c[key] for c in cands])
            scored = np.asarray([c["base_rank"] < E5_TOP for c in cands])
            sims = np.where(scored, sims, sims[scored].min())  # only the default's top E5_TOP are re-scored
            ranks = np.empty(len(sims))
            ranks[np.argsort(-sims)] = np.arange(len(sims))
            span = sims.max() - sims.min()
            e5[key] = (sims - sims.max(), (sims - sims.min()) / span if span > 1e-12 else np.ones_like(sims),
                       1.0 / (1.0 + ranks))
    rows = []
    for n, (c, s) in enumerate(zip(cands, sess, strict=True)):
        base = [c["base_score"] / top_score, 1.0 / (1.0 + c["base_rank"]), np.log1p(c["base_rank"])]
        lists = [
            c["kw_norm"], c["vec_norm"],
            float(c["kw_rank"] is not None), float(c["vec_rank"] is not None),
            1.0 / (1.0 + c["kw_rank"]) if c["kw_rank"] is not None else 0.0,
            1.0 / (1.0 + c["vec_rank"]) if c["vec_rank"] is not None else 0.0,
            (c["kw_raw"] or 0.0) / kw_top,
            (c["vec_raw"] - vec_top) if c["vec_raw"] is not None else -1.0,
        ]
        boosts = [float(c["speaker_named"]), float(c["role_match"]), c["time_match"],
                  float(c["timed"]) * float(q["asks_when"]), float(c["timed"])]
        text = [np.log1p(c["n_words"]), float(c["has_q"]), c["q_overlap"], c["q_overlap_ctx"]]
        session = [s[0], s[1] / top_score, s[2], s[3], s[4]]
        query = [x * c["kw_norm"] for x in (*qtype, float(bool(q["named"])), float(q["has_window"]),
                                             min(q["n_terms"], 10) / 10.0)]
        groups = {"base": base, "lists": lists, "boosts": boosts, "text": text, "session": session, "query": query}
        row = [x for name, values in groups.items() if name in featureset for x in values]
        if "e5" in featureset:
            row += [part[n] for key in ("e5", "e5_plain") for part in e5[key]]
        rows.append(row)
    return np.asarray(rows, dtype=np.float64)


def labels_locomo(q):
    ev = set(q["evidence"])
    return np.asarray([float(bool(ev & set(c["prov"]))) for c in q["cands"]])


def fit(Xs, ys, l2=1.0, iters=30, qweights=None, prior=None):
    """Pairwise logistic regression, questions weighted equally (times `qweights`); returns (w, mean, scale).

    The L2 penalty pulls w towards `prior` (default 0). With `prior="base"` the prior is the default
    ranking itself (first feature = default score, its coefficient fitted alone): a large l2 gives back the
    default ranking, a small one a free fit, so l2 is a shrinkage towards what is shipped.
    """
    if prior == "base":
        one = fit([X[:, :1] for X in Xs], ys, 1e-3, iters, qweights)
        scale1 = one[2]
        allx = np.vstack(Xs)
        mean, scale = allx.mean(0), allx.std(0) + 1e-9
        w0 = np.zeros(allx.shape[1])
        w0[0] = one[0][0] * scale[0] / scale1[0]
        return _newton(Xs, ys, l2, iters, qweights, mean, scale, w0)
    allx = np.vstack(Xs)
    mean, scale = allx.mean(0), allx.std(0) + 1e-9
    return _newton(Xs, ys, l2, iters, qweights, mean, scale, np.zeros(allx.shape[1]))


def _newton(Xs, ys, l2, iters, qweights, mean, scale, w0):
    diffs, weights = [], []
    qweights = qweights if qweights is not None else [1.0] * len(Xs)
    for X, y, qw in zip(Xs, ys, qweights, strict=True):
        pos, neg = np.where(y > 0)[0], np.where(y <= 0)[0]
        if not len(pos) or not len(neg):
            continue
        Z = (X - mean) / scale
        d = (Z[pos][:, None, :] - Z[neg][None, :, :]).reshape(-1, Z.shape[1])
        diffs.append(d)
        weights.append(np.full(len(d), qw / len(d)))
    D, W = np.vstack(diffs), np.concatenate(weights)
    W = W / W.sum() * len(diffs)
    w = w0.copy()
    for _ in range(iters):
        m = D @ w
        p = 1.0 / (1.0 + np.exp(np.clip(m, -30, 30)))  # sigma(-m)
        grad = -(D * (W * p)[:, None]).sum(0) + l2 * (w - w0)
        H = (D * (W * p * (1 - p))[:, None]).T @ D + l2 * np.eye(len(w))
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w, mean, scale


def rank(X, model):
    w, mean, scale = model
    return np.argsort(-(((X - mean) / scale) @ w), kind="stable")


def locomo_r10(q, order):
    return evidence_recall(q["evidence"], [q["cands"][i]["prov"] for i in order], 10)


def lme_row(q, case, order):
    ranked = [q["cands"][i]["prov"][0] for i in order[:50] if q["cands"][i]["prov"]]
    return score_case(case, ranked)


def summary_locomo(qs, r10):
    out = {"all": round(st.mean(r10), 4)}
    for cat in "1234":
        out["c" + cat] = round(st.mean(r for q, r in zip(qs, r10, strict=True) if q["cat"] == cat), 3)
    convs = sorted({q["group"] for q in qs})
    out["conv"] = [round(st.mean(r for q, r in zip(qs, r10, strict=True) if q["group"] == c), 3) for c in convs]
    return out


def summary_lme(qs, rows):
    turn = [r["turn_recall@10"] for r in rows if "turn_recall@10" in r]
    out = {"turn_r10": round(st.mean(turn), 4), "all10": round(st.mean(r["session_recall_all@10"] for r in rows), 4)}
    for t in sorted({q["group"] for q in qs}):
        out[t] = round(st.mean(r["turn_recall@10"] for q, r in zip(qs, rows, strict=True)
                               if q["group"] == t and "turn_recall@10" in r), 3)
    return out


def base_order(q):
    return sorted(range(len(q["cands"])), key=lambda i: q["cands"][i]["base_rank"])


def main(featuresets, l2s=L2S):
    loc = pickle.load(open("cands_locomo.pkl", "rb"))
    lme = pickle.load(open("cands_lme.pkl", "rb"))
    cases = {c.question_id: c for c in load_lme(LME)}
    lme = [q for q in lme if q["qid"] in cases]
    lme_cases = [cases[q["qid"]] for q in lme]
    y_loc = [labels_locomo(q) for q in loc]
    y_lme = [np.asarray([float(bool(c["prov"]) and c["prov"][0] in set(case.evidence_turns)) for c in q["cands"]])
             for q, case in zip(lme, lme_cases, strict=True)]
    results = {"base": {"locomo": summary_locomo(loc, [locomo_r10(q, base_order(q)) for q in loc]),
                        "lme": summary_lme(lme, [lme_row(q, c, base_order(q)) for q, c in zip(lme, lme_cases, strict=True)])}}
    print("base", json.dumps(results["base"]), flush=True)
    convs = sorted({q["group"] for q in loc})
    lme_fold = [i % 5 for i in range(len(lme))]
    for fs in featuresets:
        names = fs.split("+")
        X_loc = [features(q, names) for q in loc]
        locomo_only = "e5" in names and "e5" not in lme[0]["cands"][0]  # e5cache.py lme not run yet
        X_lme = [] if locomo_only else [features(q, names) for q in lme]
        for l2 in l2s:
            tag = f"{fs} l2={l2} prior={PRIOR} lme_weight={LME_WEIGHT}" + (f" e5_top={E5_TOP}" if "e5" in names else "")
            # LoCoMo leave-one-conversation-out
            r10 = [0.0] * len(loc)
            for conv in convs:
                train = [i for i, q in enumerate(loc) if q["group"] != conv]
                model = fit([X_loc[i] for i in train], [y_loc[i] for i in train], l2, prior=PRIOR)
                for i, q in enumerate(loc):
                    if q["group"] == conv:
                        r10[i] = locomo_r10(q, rank(X_loc[i], model))
            loco = summary_locomo(loc, r10)
            if locomo_only:
                results[tag] = {"loco": loco}
                print(tag, "| LOCO", loco["all"], loco, flush=True)
                continue
            # fit on all LoCoMo -> LongMemEval; fit on LongMemEval -> LoCoMo
            m_loc = fit(X_loc, y_loc, l2, prior=PRIOR)
            to_lme = summary_lme(lme, [lme_row(q, c, rank(X, m_loc)) for q, c, X in zip(lme, lme_cases, X_lme, strict=True)])
            m_lme = fit(X_lme, y_lme, l2, prior=PRIOR)
            to_loc = summary_locomo(loc, [locomo_r10(q, rank(X, m_lme)) for q, X in zip(loc, X_loc, strict=True)])
            # joint fit, grouped CV: each LoCoMo conversation and each LongMemEval fold held out in turn
            j_loc, j_lme = [0.0] * len(loc), [None] * len(lme)
            for fold in [("loc", c) for c in convs] + [("lme", f) for f in range(5)]:
                tr_X = [X for X, q in zip(X_loc, loc, strict=True) if fold != ("loc", q["group"])]
                tr_y = [y for y, q in zip(y_loc, loc, strict=True) if fold != ("loc", q["group"])]
                tr_X += [X for X, f in zip(X_lme, lme_fold, strict=True) if fold != ("lme", f)]
                tr_y += [y for y, f in zip(y_lme, lme_fold, strict=True) if fold != ("lme", f)]
                qw = [1.0] * (len(tr_X) - len([f for f in lme_fold if fold != ("lme", f)]))
                qw += [LME_WEIGHT] * (len(tr_X) - len(qw))
                model = fit(tr_X, tr_y, l2, qweights=qw, prior=PRIOR)
                if fold[0] == "loc":
                    for i, q in enumerate(loc):
                        if q["group"] == fold[1]:
                            j_loc[i] = locomo_r10(q, rank(X_loc[i], model))
                else:
                    for i in range(len(lme)):
                        if lme_fold[i] == fold[1]:
                            j_lme[i] = lme_row(lme[i], lme_cases[i], rank(X_lme[i], model))
            joint = {"locomo": summary_locomo(loc, j_loc), "lme": summary_lme(lme, j_lme)}
            results[tag] = {"loco": loco, "loc_to_lme": to_lme, "lme_to_loc": to_loc, "joint_cv": joint,
                            "weights_all_locomo": [round(float(x), 3) for x in m_loc[0]]}
            print(tag, "| LOCO", loco["all"], loco, "| ->LME", to_lme["turn_r10"], "| LME->LoCoMo", to_loc["all"],
                  "| joint CV", joint["locomo"]["all"], joint["lme"]["turn_r10"], flush=True)
            print("   ->LME", to_lme, "\n   joint", joint, flush=True)
    json.dump(results, open(os.environ.get("OUT", "ltr_results.json"), "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1:] or ["base+lists+boosts+text+session+query"])
