from fusion import norm, ranked
from harness import words
from kw_query import kw
from bm25_variants import q_base
from lab import convs, report


def boost(ci, qi, beta, mode):
    c = convs[ci]
    hits = kw(ci, q_base, c.questions[qi].text)
    speakers = {c.turns[i].speaker for i, _ in hits}  # derived from candidates only
    qw = {w.split("'")[0] for w in words(c.questions[qi].text)}
    named = {s for s in speakers if s.casefold() in qw}
    sc = norm(hits, "max")
    if named and (mode == "any" or len(named) == 1):
        sc = {i: s * (1 + beta) if c.turns[i].speaker in named else s for i, s in sc.items()}
    return ranked(sc)


for mode in ("one", "any"):
    for b in (0.3, 0.5, 0.7, 1.0, 2.0):
        report(f"exp: speaker boost x(1+{b}) mode={mode}", lambda ci, qi: boost(ci, qi, b, mode), 60)
