"""End-to-end recall and precision of the real extractor when the learned path's probabilities come
from any representation: the trainer's cross-validation (`train_disclosure.cross_validate`) with the
model's score replaced by a table of out-of-fold probabilities.

Each turn is extracted by `RuleExtractor` with a `TableWorthiness` holding the out-of-fold probability
of each of the turn's clauses (from the model fitted on the other folds), so every rule, every
out-of-reach check and the threshold test run exactly as shipped; only the number the model gives
differs. With the shipped representation the table holds what `StoreWorthiness` computes (up to
float32 rounding), which `study.py` checks against `train_disclosure.cross_validate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from memstrata.bench import extraction_realistic as realistic
from memstrata.bench import train_disclosure as trainer
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.worthiness import Reading, StoreWorthiness


class TableWorthiness(StoreWorthiness):
    """A store-worthiness model whose probability of a clause is read from a table (clause as said ->
    probability) instead of computed; records every clause the learned path asked about."""

    def __init__(self, table: dict[str, float], threshold: float) -> None:
        super().__init__(weights=None)
        self._table = table
        self._threshold = SimpleNamespace(threshold=threshold)
        self.asked: list[str] = []

    @property
    def weights(self) -> Any:
        return self._threshold

    def probability(self, clause: str, original: str, reading: Reading, *, reachable: bool = False) -> float:
        self.asked.append(original)
        return self._table[original]  # a KeyError here would mean the units and the extractor disagree


def turn_tables(units: Sequence[trainer.Unit], p: np.ndarray) -> dict[str, dict[str, float]]:
    """turn id -> {clause as said -> its out-of-fold probability}."""
    tables: dict[str, dict[str, float]] = {}
    for unit, probability in zip(units, p, strict=True):
        tables.setdefault(unit.turn, {})[unit.original] = float(probability)
    return tables


def cross_validate(
    labelled: Sequence[tuple[realistic.Turn, realistic.Label]],
    units: Sequence[trainer.Unit],
    p: np.ndarray,
    judgments: dict[str, bool],
    thresholds: Sequence[float] = trainer.THRESHOLDS,
) -> tuple[dict[float, dict[str, Any]], set[tuple[str, str]]]:
    """threshold -> the bench's scores of the real extractor over all turns (as the trainer's
    `cross_validate`), and the (turn, clause) pairs the learned path asked the model about."""
    tables = turn_tables(units, p)
    results: dict[float, list[realistic.TurnResult]] = {}
    asked: set[tuple[str, str]] = set()
    for threshold in thresholds:
        for turn, label in labelled:
            model = TableWorthiness(tables.get(turn.id, {}), threshold)  # a turn may have no clause
            found = tuple(RuleExtractor(worthiness=model).extract([turn.message()]))
            results.setdefault(threshold, []).append(realistic.TurnResult(turn, label, found))
            asked.update((turn.id, original) for original in model.asked)
    return {t: trainer.system_score(found, judgments) for t, found in results.items()}, asked
