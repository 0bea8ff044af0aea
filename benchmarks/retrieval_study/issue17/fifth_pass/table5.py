"""Scratch lab, issue 17 fifth pass: the markdown rows of BENCHMARKS.md's fifth-pass tables.

    python table5.py ltr_*.json rescore_results_*.json     # files written by ltr.py / rescore.py (cwd)
"""

import json
import sys

LME_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
             "knowledge-update", "temporal-reasoning")


def cats(s):
    return " / ".join(f"{s['c' + c]:.3f}" for c in "1234")


def convs(s):
    return " / ".join(f"{x:.3f}" for x in s["conv"])


def types(s):
    return " / ".join(f"{s[t]:.3f}" for t in LME_TYPES)


def ltr_rows(path):
    res = json.load(open(path))
    for tag, r in res.items():
        if tag == "base":
            continue
        loco, to_lme, joint = r["loco"], r["loc_to_lme"], r["joint_cv"]
        print(f"| {tag} | {loco['all']:.4f} | {cats(loco)} | {convs(loco)} | {to_lme['turn_r10']:.4f} ({types(to_lme)}) "
              f"| {r['lme_to_loc']['all']:.4f} | {joint['locomo']['all']:.4f} / {joint['lme']['turn_r10']:.4f} |")


def rescore_rows(path):
    res = json.load(open(path))
    for tag, r in res["grid"].items():
        loc, lme = r["locomo"], r["lme"]
        print(f"| {res['key']} {tag} | {loc['all']:.4f} | {cats(loc)} | {convs(loc)} | {lme['turn_r10']:.4f} ({types(lme)}) |")
    s = res["loco"]["summary"]
    print(f"| {res['key']} LOCO over the grid and off (picks {', '.join(res['loco']['picks'])}) | {s['all']:.4f} "
          f"| {cats(s)} | {convs(s)} | — |")


if __name__ == "__main__":
    for path in sys.argv[1:]:
        (rescore_rows if "rescore" in path else ltr_rows)(path)
