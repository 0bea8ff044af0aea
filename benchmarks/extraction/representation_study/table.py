"""Print the README's tables from the study's result files (`benchmarks/results/s8/representation-*.json`).

python benchmarks/extraction/representation_study/table.py benchmarks/results/s8
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ORDER = (
    "static_mean",
    "static_max_mean",
    "static_mean_spacy",
    "e5_query",
    "e5_passage",
    "e5_query_spacy",
    "e5_with_message",
)


def recall_cells(quality: dict) -> str:
    cells = []
    for least in ("0.9", "0.85", "0.8"):
        r = quality["recall_at_precision"][least]
        cells.append(f"{r['recall']:.2f} ({r['positives_kept']})")
    return " | ".join(cells)


def best_recall(by_threshold: dict, least: float) -> str:
    """The highest end-to-end recall among thresholds at judged precision >= `least`."""
    meeting = [(s["recall"], s["covered"], t) for t, s in by_threshold.items() if s["precision"] >= least]
    if not meeting:
        return "none"
    recall, covered, threshold = max(meeting)
    return f"{recall:.3f} ({covered}) at {threshold}"


def main(folder: str, floors: tuple[float, ...] = (0.90,)) -> int:
    results = {}
    for path in sorted(Path(folder).glob("representation-study-*.json")):
        study = json.loads(path.read_text(encoding="utf-8"))
        results.update(study["representations"])
    timing_path = Path(folder) / "representation-timing.json"
    timing = json.loads(timing_path.read_text(encoding="utf-8")) if timing_path.exists() else {}
    names = [n for n in ORDER if n in results]
    print(
        "| representation | width | L2 | log-loss | AUC all | AUC in reach | AP in reach | R@P.90 | R@P.85 | R@P.80 "
        "| AUC asked | AP asked | R@P.90 asked | ms/clause |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        r = results[name]
        ms = timing.get("median_ms_per_clause", {}).get(name, "")
        asked = r["asked_by_learned_path"]
        a90 = asked["recall_at_precision"]["0.9"]
        print(
            f"| {name} | {r['width']} | {r['l2']:g} | {r['log_loss']} | {r['all']['auc']} | {r['within_reach']['auc']} "
            f"| {r['within_reach']['average_precision']} | {recall_cells(r['within_reach'])} | {asked['auc']} "
            f"| {asked['average_precision']} | {a90['recall']:.2f} ({a90['positives_kept']}) | {ms} |"
        )
    print()
    print(
        "| representation | chosen threshold | recall | judged precision | pessimistic precision "
        "| memories (unjudged) | "
        + " | ".join(f"best recall at judged precision >= {least}" for least in floors)
        + " |"
    )
    print("|---|---|---|---|---|---|" + "---|" * len(floors))
    for name in names:
        e2e = results[name]["end_to_end"]
        chosen = e2e["chosen"]
        best_cells = " | ".join(best_recall(e2e["by_threshold"], least) for least in floors)
        print(
            f"| {name} | {e2e['chosen_threshold']} | {chosen['recall']:.3f} ({chosen['covered']}) "
            f"| {chosen['precision']:.3f} | {chosen['precision_pessimistic']:.3f} | {chosen['memories']} "
            f"({chosen['unjudged']}) | {best_cells} |"
        )
    for name in names:
        if "learning_curve" in results[name]:
            curve = results[name]["learning_curve"]
            cells = ", ".join(f"{f}: {c['auc']} / {c['auc_within_reach']}" for f, c in curve.items())
            print(f"\nlearning curve {name} (share of training turns: AUC all / within reach): {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], tuple(float(x) for x in sys.argv[2:]) or (0.90,)))
