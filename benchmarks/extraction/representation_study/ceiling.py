"""The ceiling of any representation: the real extractor run with a perfect store-worthiness score
(probability 1 for every clause labelled positive, 0 for every other), so the learned path stores
exactly the store-worthy clauses it is asked about. What it still misses is out of the learned path's
reach whatever the model: items said across clauses, in a clause out of reach, or in a clause a rule
read (and worded otherwise).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/extraction/representation_study/ceiling.py \
        --out benchmarks/results/s8/representation-ceiling.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # noqa: E402
import end_to_end  # noqa: E402

from memstrata.bench import extraction_realistic as realistic  # noqa: E402
from memstrata.bench import train_disclosure as trainer  # noqa: E402
from memstrata.bench.extraction_judged import load_judgments  # noqa: E402
from memstrata.extraction import disclosure  # noqa: E402
from memstrata.extraction.rules import RuleExtractor, learned  # noqa: E402
from memstrata.extraction.skip import is_question, sarcastic  # noqa: E402
from memstrata.extraction.worthiness import HARD_REFUSALS  # noqa: E402


def reach_reason(unit: trainer.Unit) -> str:
    """The first of `learned.out_of_reach`'s checks that turns the clause away, in its order."""
    clause, reading = unit.clause, unit.reading
    if not learned._SPEAKER.search(clause):
        return "no word for the speaker"
    if learned._YOU.search(clause):
        return "names you"
    if learned._IN_THE_TALK.match(clause):
        return "proposal, order or pointer"
    if reading.reason in HARD_REFUSALS:
        return f"hard refusal: {reading.reason}"
    statement = disclosure.without_evaluation(clause[reading.start or 0 :])
    if disclosure.is_thin(statement):
        return "thin"
    if reading.start is not None and disclosure.passing(statement):
        return "passing"
    if reading.start is not None and disclosure.hedged(statement) is not None:
        return "modal or musing"
    if is_question(clause):
        return "question"
    return "sarcasm" if sarcastic(clause) else "within reach"


def why_missed(item: realistic.Item, clauses: list[tuple[trainer.Unit, bool, bool]]) -> str:
    """Why a perfect score still misses `item`, from its turn's clauses (unit, within reach, asked):
    no clause holds all its words; the clauses that do are all out of reach; or within reach but never
    asked (a rule read that clause or one before it in its sentence, or the message asks the assistant);
    or asked and stored, yet the stored memory lacks a word or the date."""
    holding = [(reach, asked) for unit, reach, asked in clauses if trainer._holds(item.words, unit.original)]
    if not holding:
        return "words span clauses"
    if not any(reach for reach, _ in holding):
        first = next(unit for unit, _, _ in clauses if trainer._holds(item.words, unit.original))
        return f"out of reach: {reach_reason(first)}"
    if not any(asked for _, asked in holding):
        return "within reach, not asked"
    return "asked, stored memory lacks a word or the date"


def misses(d: data.StudyData) -> dict[str, int]:
    """Per reason (`why_missed`), the items the perfect score misses."""
    by_turn: dict[str, list[tuple[trainer.Unit, bool]]] = {}
    for unit, reach in zip(d.units, d.within_reach, strict=True):
        by_turn.setdefault(unit.turn, []).append((unit, reach))
    reasons: dict[str, int] = {}
    for turn, label in d.labelled:
        clauses = by_turn.get(turn.id, [])
        model = end_to_end.TableWorthiness({u.original: float(u.positive) for u, _ in clauses}, 0.5)
        result = realistic.TurnResult(turn, label, tuple(RuleExtractor(worthiness=model).extract([turn.message()])))
        asked = set(model.asked)
        seen = [(u, reach, u.original in asked) for u, reach in clauses]
        for item, covered in zip(label.items, result.covered(), strict=True):
            if not covered:
                reason = why_missed(item, seen)
                reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    d = data.load()
    judgments = load_judgments(realistic.LABELS_DIR / f"judgments-{realistic.NAME}.jsonl")
    perfect = np.array([float(u.positive) for u in d.units])
    table, asked = end_to_end.cross_validate(d.labelled, d.units, perfect, judgments, thresholds=(0.5,))
    score = table[0.5]
    asked_units = [u for u in d.units if (u.turn, u.original) in asked]
    result = {
        "perfect_score": {k: score[k] for k in ("items", "recall", "covered", "memories", "correct", "unjudged")}
        | {"precision": score["precision"], "precision_pessimistic": score["precision_pessimistic"]},
        "asked_clauses": len(asked_units),
        "asked_positives": sum(u.positive for u in asked_units),
        "missed_items_by_reason": misses(d),
        "command": " ".join(sys.argv),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
