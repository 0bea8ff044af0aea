"""Fusion of keyword and dense candidate lists: RRF, weighted sums with several normalizations."""
import sys

from fusion import norm, ranked, rrf, weighted
from harness import words
from lab import convs, dense_lists, kw_lists, report


def speaker_boost(ci, qi, scores, beta):
    if not beta:
        return scores
    c = convs[ci]
    qw = {w.split("'")[0] for w in words(c.questions[qi].text)}
    named = {c.turns[i].speaker for i in scores} & {s for s in c.speakers if s.casefold() in qw}
    named = {c.turns[i].speaker for i in scores if c.turns[i].speaker.casefold() in qw}
    if not named:
        return scores
    return {i: s * (1 + beta) if c.turns[i].speaker in named else s for i, s in scores.items()}


def shift_pos(scores):
    """make scores non-negative so a multiplicative boost is monotone (for z-score)."""
    lo = min(scores.values())
    return {i: s - lo for i, s in scores.items()} if lo < 0 else scores


def main(kwcfg, dmodel, depth=50, beta=0.0, tag=""):
    K = kw_lists(kwcfg)
    Dn = dense_lists(dmodel, depth)
    pre = f"{tag}kw[{kwcfg}]+{dmodel} d{depth}" + (f" spk{beta}" if beta else "")

    def kwl(ci, qi):
        return K[ci][qi][:depth]

    report(f"{pre} kw alone", lambda ci, qi: ranked(speaker_boost(ci, qi, norm(kwl(ci, qi), "max"), beta)), 64)
    report(f"{pre} dense alone", lambda ci, qi: ranked(speaker_boost(ci, qi, norm(Dn[ci][qi], "raw"), beta)), 64)
    for k in (10, 60):
        report(f"{pre} RRF k={k}",
               lambda ci, qi: ranked(speaker_boost(ci, qi, rrf([kwl(ci, qi), Dn[ci][qi]], k), beta)), 64)
    for wk in (1.5, 2.0):
        report(f"{pre} RRF k=60 kw weight {wk}",
               lambda ci, qi: ranked(speaker_boost(ci, qi, rrf([kwl(ci, qi), Dn[ci][qi]], 60, [wk, 1]), beta)), 64)
    for method in ("minmax", "max", "z", "rank"):
        for wd in ((0.7, 0.5, 0.3, 0.2, 0.1) if method == "minmax" or method == "max" else (0.7, 0.3)):
            report(f"{pre} {wd} dense + {1 - wd:.1f} kw [{method}]",
                   lambda ci, qi: ranked(speaker_boost(ci, qi, shift_pos(weighted(
                       {"d": Dn[ci][qi], "k": kwl(ci, qi)}, {"d": wd, "k": 1 - wd}, method)), beta)), 64)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
