import json, random
from memstrata.bench.locomo_data import load
convs = load("/work/shared/data/locomo/locomo-dev.json")
rows = json.load(open("rows4_locomo_content.json"))
qs = [(c, q) for c in convs for q in c.questions]
random.seed(1)
missed = [(c, q, r) for (c, q), r in zip(qs, rows) if r["r50"] < 1]
print(len(missed), "questions with evidence outside top 50")
for c, q, r in random.sample(missed, 14):
    text = {t.dia_id: t.document for t in c.turns}
    print("\nQ", q.category, q.question)
    for e in q.evidence: print("   ", e, text[e][:160])
