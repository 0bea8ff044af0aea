"""Keyword-only variants: query processing, speaker handling, document expansion, date columns."""
import re

from harness import FTS, STOPWORDS, evaluate, fmt, fts_query_terms, load, words

convs = load()
DEPTH = 50

QWORDS = frozenset("""kind type types sort ever many much often long likely might think mention mentioned
according say said describe name one something thing things way ways""".split())


def run(name, columns_fn, query_fn, weights=None, tokenizer="porter unicode61"):
    ftss = [FTS(columns_fn(c), weights, tokenizer) for c in convs]
    res = evaluate(convs, lambda ci, qi: [i for i, _ in ftss[ci].search(query_fn(convs[ci], convs[ci].questions[qi].text), DEPTH)])
    print(fmt(name, res), flush=True)
    return res


def own(c):
    return [[t.text for t in c.turns]]


def q_base(c, q):
    return fts_query_terms(q)


def q_nostop(c, q):
    return list(dict.fromkeys(w.split("'")[0] for w in words(q) if w.split("'")[0]))


def q_qwords(c, q):
    return [w for w in fts_query_terms(q) if w not in QWORDS]


def q_nospeaker(c, q):
    sp = {s.casefold() for s in c.speakers}
    return [w for w in fts_query_terms(q) if w not in sp] or fts_query_terms(q)


def q_bigrams(c, q):
    terms = fts_query_terms(q)
    return terms + [f"{a} {b}" for a, b in zip(terms, terms[1:])]


def q_bigrams_raw(c, q):
    """bigrams only of words adjacent in the question (no stopword in between)."""
    ws = [w.split("'")[0] for w in words(q)]
    big = [f"{a} {b}" for a, b in zip(ws, ws[1:]) if a not in STOPWORDS and b not in STOPWORDS]
    return fts_query_terms(q) + big


def nospk(c):
    return [[t.raw + (f" [shares a photo: {t.text.split('[shares a photo: ')[1]}" if "[shares a photo" in t.text else "") for t in c.turns]]


def spk_col(c):
    return nospk(c) + [[t.speaker for t in c.turns]]


def prev_col(c):
    ts = c.turns
    return [[t.text for t in ts], [ts[i - 1].text if i and ts[i - 1].session == t.session else "" for i, t in enumerate(ts)]]


def next_col(c):
    ts = c.turns
    return [[t.text for t in ts], [ts[i + 1].text if i + 1 < len(ts) and ts[i + 1].session == t.session else "" for i, t in enumerate(ts)]]


def both_col(c):
    return [prev_col(c)[0], prev_col(c)[1], next_col(c)[1]]


def concat_prev(c):
    ts = c.turns
    return [[(ts[i - 1].text + " " if i and ts[i - 1].session == t.session else "") + t.text for i, t in enumerate(ts)]]


_DT = re.compile(r"on (\d+) (\w+), (\d{4})")


def date_text(t):
    m = _DT.search(t.date)
    return f"{m.group(1)} {m.group(2)} {m.group(3)}" if m else t.date


def date_col(c):
    return own(c) + [[date_text(t) for t in c.turns]]


def date_concat(c):
    return [[t.text + " " + date_text(t) for t in c.turns]]


if __name__ == "__main__":
    run("BM25 baseline (porter, stopwords)", own, q_base)
    run("BM25 unicode61 (no stemming)", own, q_base, tokenizer="unicode61")
    run("BM25 trigram tokenizer", own, q_base, tokenizer="trigram")
    run("query: no stopword removal", own, q_nostop)
    run("query: + question-filler removal", own, q_qwords)
    run("query: speaker names removed", own, q_nospeaker)
    run("query: + bigram phrases", own, q_bigrams)
    run("query: + bigram phrases (adjacent only)", own, q_bigrams_raw)
    run("index: no speaker prefix", nospk, q_base)
    for w in (0.2, 0.5, 1.0):
        run(f"index: speaker as column w={w}", spk_col, q_base, weights=[1, w])
    for w in (0.1, 0.2, 0.3, 0.5):
        run(f"index: + prev-turn column w={w}", prev_col, q_base, weights=[1, w])
    for w in (0.1, 0.2, 0.3, 0.5):
        run(f"index: + next-turn column w={w}", next_col, q_base, weights=[1, w])
    for w in (0.1, 0.2, 0.3):
        run(f"index: + prev & next columns w={w}", both_col, q_base, weights=[1, w, w])
    run("index: prev turn concatenated", concat_prev, q_base)
    for w in (0.2, 0.5, 1.0):
        run(f"index: + session-date column w={w}", date_col, q_base, weights=[1, w])
    run("index: session date concatenated", date_concat, q_base)
