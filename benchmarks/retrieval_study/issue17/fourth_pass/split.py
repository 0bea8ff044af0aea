"""Lab: a question naming two speakers ("both Joanna and Nate") searched as one sub-question per speaker,
the two rankings interleaved (query side; LoCoMo only)."""
import re, statistics as st, sys
from lab4 import open_memory, load_locomo, LOCOMO
from memstrata.bench.locomo_data import evidence_recall
from memstrata.models import Scope

def sub_questions(q, speakers):
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", q)]
    if len(named) != 2:
        return None
    a, b = named
    out = []
    for keep, drop in ((a, b), (b, a)):
        t = re.sub(rf"\bboth\s+", "", q)
        t = re.sub(rf"\b{drop}\s+and\s+{keep}\b|\b{keep}\s+and\s+{drop}\b", keep, t)
        t = re.sub(rf"\b{drop}\b", "", t)
        out.append(re.sub(r"\s+", " ", t).strip())
    return out

mode = sys.argv[1] if len(sys.argv) > 1 else "rr"
rows = []
with open_memory("locomo") as m:
    for c in load_locomo(LOCOMO):
        scope = Scope(f"locomo-{c.sample_id}")
        speakers = sorted({t.speaker for t in c.turns})
        for q in c.questions:
            hits = m.search(q.question, scope=scope, k=50)
            prov = [h.memory.source_ids for h in hits]
            subs = sub_questions(q.question, speakers)
            if subs:
                lists = [[h.memory.source_ids for h in m.search(s, scope=scope, k=50)] for s in subs]
                if mode == "rr":
                    merged = [x for pair in zip(*lists) for x in pair]
                else:  # whole query first 4, then round robin
                    merged = prov[:4] + [x for pair in zip(*lists) for x in pair]
                prov = list(dict.fromkeys(merged))
            rows.append((q.category, bool(subs), evidence_recall(q.evidence, prov, 10), c.sample_id))
print(mode, "all", round(st.mean(r[2] for r in rows), 4), "split questions", sum(r[1] for r in rows),
      "c1", round(st.mean(r[2] for r in rows if r[0] == "1"), 3),
      "conv", [round(st.mean(r[2] for r in rows if r[3] == c), 3) for c in sorted({r[3] for r in rows})])
