from harness import FTS, evaluate, fmt, fts_query_terms, load

convs = load()
ftss = [FTS([[t.text for t in c.turns]]) for c in convs]
res = evaluate(convs, lambda ci, qi: [i for i, _ in ftss[ci].search(fts_query_terms(convs[ci].questions[qi].text), 50)])
print(fmt("BM25 FTS5 porter", res))
