"""Lab: refresh the held-out estimates with per-user statistics.
LoCoMo: vector_weight x time_boost, leave-one-conversation-out. LongMemEval: vector_weight x role_boost,
leave-one-question-out and split halves. Per-question rows of every setting go to grid/."""
import itertools, json, os, statistics as st
from memstrata.core.retrieval import HybridParams
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fourth_pass"))
import lab4  # noqa: E402  (the lab stores and scoring of the fourth pass)

def run(bench, params):
    path = f"grid/{bench}_{params.vector_weight}_{params.time_boost}_{params.role_boost}.json"
    if os.path.exists(path):
        return json.load(open(path))
    with lab4.open_memory(bench) as m:
        m._layers.semantic.params = params
        rows, _ = (lab4.score_locomo if bench == "locomo" else lab4.score_lme)(m)
    json.dump(rows, open(path, "w"))
    return rows

VW = (0.2, 0.25, 0.3, 0.35, 0.4)
loc = {(vw, tb): run("locomo", HybridParams(vector_weight=vw, time_boost=tb)) for vw, tb in itertools.product(VW, (0.0, 1.0, 2.0))}
lme = {(vw, rb): [r for r in run("lme", HybridParams(vector_weight=vw, role_boost=rb)) if "turn_recall@10" in r]
       for vw, rb in itertools.product(VW, (0.0, 1.0, 2.0, 4.0))}
default_loc, default_lme = (0.3, 1.0), (0.3, 2.0)

def mean(rows, key):
    return st.mean(r[key] for r in rows)

convs = sorted({r["conv"] for r in loc[default_loc]})
held = []
chosen = {}
for c in convs:
    best = max(loc, key=lambda s: (mean([r for r in loc[s] if r["conv"] != c], "r10"), s == default_loc))
    chosen[c] = best
    held += [r for r in loc[best] if r["conv"] == c]
out = {"locomo": {"default": round(mean(loc[default_loc], "r10"), 4), "in_sample_best": max((round(mean(v, "r10"), 4), k) for k, v in loc.items()),
                  "loco": round(mean(held, "r10"), 4), "chosen": {c: list(s) for c, s in chosen.items()},
                  "loco_temporal": round(st.mean(r["r10"] for r in held if r["cat"] == "2"), 4)}}
n = len(lme[default_lme])
loqo = []
for i in range(n):
    best = max(lme, key=lambda s: (sum(r["turn_recall@10"] for j, r in enumerate(lme[s]) if j != i), s == default_lme))
    loqo.append(lme[best][i]["turn_recall@10"])
halves = []
for h in (0, 1):
    best = max(lme, key=lambda s: (mean(lme[s][h::2], "turn_recall@10"), s == default_lme))
    halves.append((round(mean(lme[best][1 - h::2], "turn_recall@10"), 4), best))
out["lme"] = {"default": round(mean(lme[default_lme], "turn_recall@10"), 4),
              "in_sample_best": max((round(mean(v, "turn_recall@10"), 4), k) for k, v in lme.items()),
              "leave_one_question_out": round(st.mean(loqo), 4), "split_halves": halves}
print(json.dumps(out, indent=1))
json.dump(out, open("loco_estimates.json", "w"), indent=1)
