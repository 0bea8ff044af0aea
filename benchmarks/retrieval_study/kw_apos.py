"""Store's fts_query (apostrophe words kept whole, e.g. "caroline's" = phrase "caroline s") vs splitting."""
from bm25_variants import own, q_base, run
from bm25_expand import ctx_cols
from harness import STOPWORDS, words


def q_store(c, q):
    return [w for w in dict.fromkeys(words(q)) if w not in STOPWORDS]


run("plain index, query split at apostrophe (mine)", own, q_base)
run("plain index, store fts_query (whole)", own, q_store)
run("exp index, query split at apostrophe (mine)", ctx_cols(2, False, True), q_base, [1, 0.5, 1.0])
run("exp index, store fts_query (whole)", ctx_cols(2, False, True), q_store, [1, 0.5, 1.0])
