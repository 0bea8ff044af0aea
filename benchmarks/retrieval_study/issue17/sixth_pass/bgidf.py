"""Lab: per-user BM25 IDF blended with a user-independent background (pseudo-documents).

    python bgidf.py locomo+lme M,L ...

The background is English word frequency from the `wordfreq` package (not a memstrata dependency:
install it into the lab environment), summed per FTS5 porter stem. A term's background document share is
1 - (1 - f)^L (the chance that a text of L tokens holds it), and the IDF becomes
ln((N + M - n - M*share + 0.5) / (n + M*share + 0.5)): M pseudo-documents drawn from general English
added to the user's N memories. M = 0 is the shipped per-user IDF. Scores both lab stores of
../fourth_pass/lab4.py (run from the folder holding them)."""
import json, os, sys, time, math
from collections import defaultdict
import wordfreq
from memstrata.core import bm25
from memstrata.core.porter import porter_stem
import memstrata.storage.sqlite as sq
import memstrata.storage.sqlite_keyword as sk
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fourth_pass"))
import lab4  # noqa: E402  (the lab stores and scoring of the fourth pass)

TOP = int(os.environ.get("TOP", "200000"))
t = time.time()
stem_freq = defaultdict(float)
for w in wordfreq.top_n_list("en", TOP):
    f = wordfreq.word_frequency(w, "en")
    s = porter_stem(w) if 3 <= len(w.encode()) <= 64 else w
    stem_freq[s] += f
print("background", len(stem_freq), round(time.time() - t, 1), "s", file=sys.stderr)

M = 0.0
L = 20.0
MODE = "pseudo"

def share(term):
    f = stem_freq.get(term, 0.0)
    return 1.0 - (1.0 - min(f, 1.0)) ** L

orig = sk.search_plan
def plan(conn, user_id, terms, budget):
    p = orig(conn, user_id, terms, budget)
    if p is None or M == 0:
        return p
    totals = conn.execute("SELECT documents FROM keyword_totals WHERE user_id = ?", (user_id,)).fetchone()
    total = totals[0]
    docs = dict(conn.execute(f"SELECT term, documents FROM keyword_documents WHERE user_id = ? AND term IN ({','.join('?'*len(p.terms))})", (user_id, *p.terms)).fetchall())
    idfs = []
    for term in p.terms:
        n = docs.get(term, 0)
        nn = n + M * share(term)
        NN = total + M
        v = math.log((NN - nn + 0.5) / (nn + 0.5))
        idfs.append(bm25.MIN_IDF if v <= 0 else v)
    return sk.SearchPlan(p.terms, idfs, p.average_length)
sq.search_plan = plan

for spec in sys.argv[2:]:
    M, L = (float(x) for x in spec.split(","))
    for bench in sys.argv[1].split("+"):
        with lab4.open_memory(bench) as m:
            t = time.time()
            rows, out = (lab4.score_locomo if bench == "locomo" else lab4.score_lme)(m)
        print(bench, spec, json.dumps(out), round(time.time() - t, 1), "s", flush=True)
