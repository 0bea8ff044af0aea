from bm25_expand import ctx_cols
from bm25_variants import q_base, run

for pn in (2, 3):
    for wp in (0.3, 0.5, 0.7):
        for wn in (0.0, 0.2):
            for wd in (0.0, 1.0):
                cols_w = [1, wp] + ([wn] if wn else []) + ([wd] if wd else [])
                run(f"prev{pn} {wp} next {wn} date {wd}", ctx_cols(pn, bool(wn), bool(wd)), q_base, cols_w)
