"""Table of the fourth pass's LoCoMo variants (rows4_locomo_*.json) with leave-one-conversation-out
estimates, and the LongMemEval rows (rows4_lme_*.json): python table4.py OUT.json"""
import glob, json, statistics as st, sys

def load(bench):
    out = {}
    for path in sorted(glob.glob(f"rows4_{bench}_*.json")):
        out[path[len(f"rows4_{bench}_"):-5]] = json.load(open(path))
    return out

def mean(rows, key="r10"):
    return sum(r[key] for r in rows) / len(rows) if rows else 0.0

def loco(variants, names):
    """Choose the best of `names` on four conversations, score it on the fifth; weighted by questions."""
    convs = sorted({r["conv"] for r in variants[names[0]]})
    total, n, chosen = 0.0, 0, {}
    for held in convs:
        best = max(names, key=lambda v: mean([r for r in variants[v] if r["conv"] != held]))
        rows = [r for r in variants[best] if r["conv"] == held]
        total += sum(r["r10"] for r in rows); n += len(rows); chosen[held] = best
    return round(total / n, 4), chosen

lo = load("locomo")
base = mean(lo["content"])
table = []
for name, rows in lo.items():
    convs = sorted({r["conv"] for r in rows})
    per = [round(mean([r for r in rows if r["conv"] == c]), 3) for c in convs]
    # the variant against the baseline, chosen per fold: is it chosen on four conversations, and what does the fifth get
    est, chosen = loco(lo, ["content", name]) if name != "content" else (round(base, 4), {})
    table.append({"variant": name, "r10": round(mean(rows), 4), "delta": round(mean(rows) - base, 4),
                  "by_category": {c: round(mean([r for r in rows if r["cat"] == c]), 3) for c in "1234"},
                  "per_conversation": dict(zip(convs, per)), "loco_vs_content": est,
                  "folds_choosing_it": sum(1 for v in chosen.values() if v == name)})
blend = [n for n in lo if n.startswith("blend_")] + ["content"]
allv = list(lo)
summary = {"loco_blend_weight": loco(lo, blend), "loco_all_variants": loco(lo, allv)}
lme = {}
for name, rows in load("lme").items():
    types = sorted({r["type"] for r in rows})
    lme[name] = {"turn_r10": round(mean([r for r in rows if "turn_recall@10" in r], "turn_recall@10"), 4),
                 "session_all@10": round(mean(rows, "session_recall_all@10"), 4),
                 "by_type": {t: round(mean([r for r in rows if r["type"] == t and "turn_recall@10" in r], "turn_recall@10"), 3) for t in types}}
json.dump({"locomo": table, "locomo_loco": summary, "longmemeval": lme}, open(sys.argv[1], "w"), indent=1)
for row in sorted(table, key=lambda r: -r["r10"]):
    print(f"| {row['variant']} | {row['r10']:.4f} | {row['delta']:+.4f} | " + " / ".join(f"{v:.3f}" for v in row["by_category"].values())
          + " | " + " / ".join(f"{v:.3f}" for v in row["per_conversation"].values()) + f" | {row['loco_vs_content']:.4f} ({row['folds_choosing_it']}/5) |")
print(summary)
for k, v in lme.items(): print(k, v)
