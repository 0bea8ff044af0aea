"""Misc keyword checks: one shared FTS table for all users (global IDF), date formats, snowball pre-stemming."""
import re
import sqlite3

from bm25_expand import ctx_cols
from bm25_variants import _DT, q_base, run
from fusion import norm, ranked
from fusion_exp import speaker_boost
from harness import content_terms
from lab import convs, report

W = [1, 0.5, 1.0]


def cols(c):
    full = ctx_cols(2, False, True)(c)
    return full


# 1) one table, all users; filter by user column (UNINDEXED)
db = sqlite3.connect(":memory:")
db.execute("CREATE VIRTUAL TABLE t USING fts5(content, context, date, user UNINDEXED, tokenize='porter unicode61')")
rowmap = {}
rid = 0
for ci, c in enumerate(convs):
    cc = cols(c)
    for i in range(len(c.turns)):
        rid += 1
        rowmap[rid] = (ci, i)
        db.execute("INSERT INTO t(rowid, content, context, date, user) VALUES (?,?,?,?,?)", (rid, cc[0][i], cc[1][i], cc[2][i], c.sample_id))
SQL = "SELECT rowid, -bm25(t, 1.0, 0.5, 1.0, 0.0) FROM t WHERE t MATCH ? AND user = ? ORDER BY bm25(t, 1.0, 0.5, 1.0, 0.0) LIMIT 50"


def shared(ci, qi):
    c = convs[ci]
    terms = q_base(c, c.questions[qi].text)
    m = " OR ".join(f'"{w}"' for w in terms)
    return [(rowmap[r][1], s) for r, s in db.execute(SQL, (m, c.sample_id))]


from harness import FTS  # noqa: E402

tabs = [FTS(cols(c), W) for c in convs]
report("per-user FTS tables (prev2 0.5, date 1.0) spk1.0",
       lambda ci, qi: ranked(speaker_boost(ci, qi, norm(tabs[ci].search(q_base(convs[ci], convs[ci].questions[qi].text), 50), "max"), 1.0)), 60)
report("one shared FTS table, user filter, spk1.0",
       lambda ci, qi: ranked(speaker_boost(ci, qi, norm(shared(ci, qi), "max"), 1.0)), 60)


# 2) date formats
def fmt_cols(f):
    def g(c):
        base = ctx_cols(2, False, False)(c)
        return base + [[f(t) for t in c.turns]]
    return g


def d_full(t):
    m = _DT.search(t.date)
    return f"{m.group(1)} {m.group(2)} {m.group(3)}"


def d_month_year(t):
    m = _DT.search(t.date)
    return f"{m.group(2)} {m.group(3)}"


def d_raw(t):
    return t.date


for name, f in (("'8 May 2023'", d_full), ("'May 2023'", d_month_year), ("raw '1:56 pm on 8 May, 2023'", d_raw)):
    run(f"date column as {name}", fmt_cols(f), q_base, W)


# 3) snowball (PyStemmer) pre-stemmed text + unicode61 tokenizer instead of FTS5 porter
def stemmed_cols(c):
    return [[" ".join(content_terms(x)) for x in col] for col in cols(c)]


def q_stem(c, q):
    return list(dict.fromkeys(content_terms(q)))


run("porter tokenizer (prev2 0.5, date 1.0)", cols, q_base, W)
run("snowball pre-stemmed + unicode61", stemmed_cols, q_stem, W, tokenizer="unicode61")
