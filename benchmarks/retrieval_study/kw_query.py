"""Query-side variants on the expanded index: speaker boost, proper-noun emphasis, question-word removal."""
import re

from bm25_expand import ctx_cols
from bm25_variants import q_base, q_bigrams_raw, q_nospeaker, q_qwords
from fusion import norm, ranked
from harness import FTS, words
from lab import convs, report

W = [1, 0.5, 0.2, 1.0]
ftss = [FTS(ctx_cols(2, True, True)(c), W) for c in convs]


def kw(ci, qfn, text):
    return ftss[ci].search(qfn(convs[ci], text), 50)


def run_q(name, qfn):
    report(name, lambda ci, qi: [i for i, _ in kw(ci, qfn, convs[ci].questions[qi].text)], 60)


def q_proper_dup(c, q):
    """Repeat capitalized non-initial words (proper nouns) once more in the OR query."""
    caps = [w.casefold() for w in re.findall(r"(?<!^)(?<![.?!] )\b([A-Z][\w']+)", q)]
    caps = [w.split("'")[0] for w in caps if w not in {s.casefold() for s in c.speakers}]
    return q_base(c, q) + [w for w in caps if w in q_base(c, q)]


def speaker_boost(ci, qi, beta, qfn=q_base):
    c = convs[ci]
    qw = set(words(c.questions[qi].text))
    qw |= {w.split("'")[0] for w in qw}
    named = [s for s in c.speakers if s.casefold() in qw]
    sc = norm(kw(ci, qfn, c.questions[qi].text), "max")
    if len(named) == 1:
        sc = {i: s * (1 + beta) if c.turns[i].speaker == named[0] else s for i, s in sc.items()}
    return ranked(sc)


if __name__ == "__main__":
    run_q("exp: base query", q_base)
    run_q("exp: question-filler removal", q_qwords)
    run_q("exp: speaker names removed from query", q_nospeaker)
    run_q("exp: + adjacent bigram phrases", q_bigrams_raw)
    run_q("exp: proper nouns doubled", q_proper_dup)
    for b in (0.1, 0.2, 0.4):
        report(f"exp: speaker boost x(1+{b}) when 1 speaker named", lambda ci, qi: speaker_boost(ci, qi, b), 60)
