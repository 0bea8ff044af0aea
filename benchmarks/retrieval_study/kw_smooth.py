from fusion import norm, ranked, smooth
from lab import kw_lists, neighbours, report

for cfg in ("plain", "exp"):
    L = kw_lists(cfg)
    nb = neighbours()
    report(f"kw[{cfg}] depth50", lambda ci, qi: [i for i, _ in L[ci][qi][:50]])
    for lam in (0.1, 0.2, 0.3, 0.5):
        for add in (False, True):
            report(f"kw[{cfg}] + nb smooth lam={lam} add_new={add}",
                   lambda ci, qi: ranked(smooth(norm(L[ci][qi][:50], "max"), nb[ci], lam, add)))
