"""Extraction measured on text the project did not write: LongMemEval and LoCoMo.

Recall is automatic (`extraction_longmemeval`, `extraction_locomo`); precision is judged by hand on a
stable sample of what was extracted (`extraction_judged`), the judgments kept as hashes in
`benchmarks/extraction/judgments-<dataset>.jsonl` so that no text of the data sets is stored here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from memstrata.extraction.base import Extractor
from memstrata.extraction.rules import RuleExtractor

from . import extraction_locomo, extraction_longmemeval
from .extraction_judged import judged_precision, load_judgments

JUDGMENTS_DIR = Path(__file__).resolve().parents[1] / "extraction"
SAMPLE = 60


def run(
    *,
    longmemeval: str | Path | None = None,
    locomo: str | Path | None = None,
    judgments_dir: str | Path = JUDGMENTS_DIR,
    sample: int = SAMPLE,
    extractor: Extractor | None = None,
) -> dict[str, Any]:
    """Recall and judged precision on each data set given (a path of None skips that set)."""
    chosen = extractor or RuleExtractor()
    result: dict[str, Any] = {}
    runners = {"longmemeval": (longmemeval, extraction_longmemeval.run), "locomo": (locomo, extraction_locomo.run)}
    for name, (path, runner) in runners.items():
        if path is None:
            continue
        started = time.perf_counter()
        scores, pairs = runner(path, chosen)
        scores["seconds"] = round(time.perf_counter() - started, 2)
        judgments = load_judgments(Path(judgments_dir) / f"judgments-{name}.jsonl")
        scores["judged"] = judged_precision(pairs, judgments, size=sample)
        scores["path"] = str(path)
        result[name] = scores
    return result
