from fusion import norm, ranked
from lab import convs, kw_lists, report


def dsmooth(scores, ci, lp, ln):
    ts = convs[ci].turns
    out = dict(scores)
    for i, s in scores.items():
        if i + 1 < len(ts) and ts[i + 1].session == ts[i].session:
            out[i + 1] = out.get(i + 1, 0.0) + lp * s  # turn after a hit gets lp * hit
        if i - 1 >= 0 and ts[i - 1].session == ts[i].session:
            out[i - 1] = out.get(i - 1, 0.0) + ln * s
    return out


for cfg in ("plain", "exp"):
    L = kw_lists(cfg)
    for lp, ln in ((0.3, 0.0), (0.5, 0.0), (0.5, 0.2), (0.7, 0.2), (0.5, 0.1), (0.2, 0.1)):
        report(f"kw[{cfg}] directional smooth from-prev {lp} from-next {ln}",
               lambda ci, qi: ranked(dsmooth(norm(L[ci][qi][:50], "max"), ci, lp, ln)), 60)
