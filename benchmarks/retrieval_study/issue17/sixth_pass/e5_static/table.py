import json
res = {}
for line in open("results.jsonl"):
    r = json.loads(line); res.setdefault(r["model"], {})[r["bench"]] = r
b = json.load(open("raw_passage.time.json")); q = json.load(open("raw_query.time.json"))
build = {"passage": b["seconds"], "query": q["seconds"]}
types = ["knowledge-update", "multi-session", "single-session-assistant", "single-session-preference", "single-session-user", "temporal-reasoning"]
abbr = ["KU", "MS", "SSA", "SSP", "SSU", "TR"]
order = ["shipped", "e5s-passage-256", "e5s-query-256", "e5s-mean-256", "e5s-passage-256-nosif", "e5s-passage-pca384", "e5s-mean-pca384",
         "e5s-passage-384", "e5s-query-384", "e5s-mean-384", "e5s-lit-passage-256", "e5s-lit-mean-256", "e5s-lit-mean-384"]
def bt(m):
    if m == "shipped": return "(shipped; ~20-100 s MiniLM distill)"
    side = "passage" if "passage" in m else "query" if "query" in m else "both"
    t = build["passage"] + build["query"] if side == "both" else build[side]
    return f"{t:.0f} s e5 + <10 s PCA/SIF" + (" + ~95 s/side ## re-embed" if "lit" in m else "")
for strat in ("hybrid", "semantic"):
    print(f"\n### {strat} ({'default memstrata search' if strat == 'hybrid' else 'dense only'})\n")
    print("| variant | LoCoMo R@10 | c1 | c2 | c3 | c4 | LME turn R@10 | " + " | ".join(abbr) + " | build |")
    print("|---" * (8 + len(abbr)) + "|")
    for m in order:
        if m not in res or "locomo" not in res[m] or "lme" not in res[m]: continue
        L, M = res[m]["locomo"][strat], res[m]["lme"][strat]
        print(f"| {m} | {L['all']:.4f} | {L['c1']:.3f} | {L['c2']:.3f} | {L['c3']:.3f} | {L['c4']:.3f} | {M['turn_r10']:.4f} | "
              + " | ".join(f"{M[t]:.3f}" for t in types) + f" | {bt(m) if strat == 'hybrid' else ''} |")
