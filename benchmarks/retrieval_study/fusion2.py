"""Second batch on the expanded keyword index (prev2 0.5, next 0.2, date 1.0) with speaker boost."""
import re

import numpy as np

from fusion import norm, ranked, rrf, weighted
from fusion_exp import speaker_boost
from lab import convs, dense, dense_lists, kw_lists, report

K = kw_lists("exp")
B = 1.0  # speaker boost


def kwl(ci, qi, depth):
    return K[ci][qi][:depth]


def fused(ci, qi, dl, wd, depth=50, method="minmax"):
    return weighted({"d": dl[ci][qi][:depth], "k": kwl(ci, qi, depth)}, {"d": wd, "k": 1 - wd}, method)


if __name__ == "__main__":
    for model in ("m2v", "e5"):
        DL = dense_lists(model, 100)
        for depth in (20, 50, 100):
            for k in (10, 60):
                report(f"{model} RRF k={k} depth {depth} spk{B}",
                       lambda ci, qi: ranked(speaker_boost(ci, qi, rrf([kwl(ci, qi, depth), DL[ci][qi][:depth]], k), B)), 60)
            for wd in (0.2, 0.3):
                report(f"{model} {wd} dense minmax depth {depth} spk{B}",
                       lambda ci, qi: ranked(speaker_boost(ci, qi, fused(ci, qi, DL, wd, depth), B)), 60)

        # complete dense scores: every keyword candidate also gets its true cosine
        S = dense(model)

        def complete(ci, qi, wd, depth=50, lam=0.0):
            kw = kwl(ci, qi, depth)
            ids = {i for i, _ in kw} | {i for i, _ in DL[ci][qi][:depth]}
            cos = S[ci][qi]
            ts = convs[ci].turns
            dsc = []
            for i in ids:
                s = float(cos[i])
                if lam and i > 0 and ts[i - 1].session == ts[i].session:
                    s += lam * float(cos[i - 1])
                dsc.append((i, s))
            dsc.sort(key=lambda x: -x[1])
            return weighted({"d": dsc, "k": kw}, {"d": wd, "k": 1 - wd}, "minmax")

        for wd in (0.2, 0.3, 0.4):
            report(f"{model} complete-cosine {wd} dense minmax spk{B}",
                   lambda ci, qi: ranked(speaker_boost(ci, qi, complete(ci, qi, wd), B)), 60)
        for lam in (0.3, 0.5):
            report(f"{model} complete-cosine 0.3 + dense prev-smooth {lam}",
                   lambda ci, qi: ranked(speaker_boost(ci, qi, complete(ci, qi, 0.3, 50, lam), B)), 60)

    # e5 as re-scorer of the top-50 of the m2v hybrid
    DL = dense_lists("m2v", 50)
    E = dense("e5")

    def rescore(ci, qi, we, wd=0.2):
        base = speaker_boost(ci, qi, fused(ci, qi, DL, wd), B)
        top = ranked(base)[:50]
        e = norm(sorted(((i, float(E[ci][qi][i])) for i in top), key=lambda x: -x[1]), "minmax")
        b = norm(sorted(((i, base[i]) for i in top), key=lambda x: -x[1]), "minmax")
        return ranked({i: (1 - we) * b[i] + we * e[i] for i in top})

    for we in (0.2, 0.3, 0.5):
        report(f"m2v hybrid top-50 re-scored with e5 weight {we}", lambda ci, qi: rescore(ci, qi, we), 60)

    # entity boost: candidates containing a capitalised non-speaker word of the question
    def entity(ci, qi, g):
        c = convs[ci]
        q = c.questions[qi].text
        ents = {w.casefold() for w in re.findall(r"(?<!^)\b([A-Z][a-z]+)", q)} - {s.casefold() for s in c.speakers}
        sc = speaker_boost(ci, qi, fused(ci, qi, DL, 0.2), B)
        if not ents:
            return ranked(sc)
        out = {}
        for i, s in sc.items():
            text = c.turns[i].text.casefold()
            out[i] = s * (1 + g) if any(re.search(rf"\b{re.escape(e)}", text) for e in ents) else s
        return ranked(out)

    for g in (0.2, 0.5):
        report(f"m2v hybrid + entity boost x(1+{g})", lambda ci, qi: entity(ci, qi, g), 60)
