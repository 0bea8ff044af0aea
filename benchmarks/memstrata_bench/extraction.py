"""Extraction benchmark: precision / recall / F1 of an extractor on a labelled JSONL file.

Each line: {"id", "text", "at" (ISO time), "speaker"?, "role"? ("user"), "split" ("dev"/"heldout"),
"expected": [{"category", "attribute"?, "value"?, "date"? (YYYY-MM-DD)}]}; an empty list means
nothing should be extracted. A predicted candidate matches a gold item when the category is the same
and, if the gold item names an attribute, the attribute is the same. Matching is one-to-one.
Value and date agreement of matched pairs are reported separately (they do not affect P/R/F1).

`score` is pure; `run` reads the file and runs an extractor (the offline `RuleExtractor` by default).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memstrata import InvalidInput
from memstrata.extraction.base import CATEGORIES, Candidate, Extractor, Message
from memstrata.extraction.rules import RuleExtractor

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "extraction" / "labelled.jsonl"
SPLITS = ("dev", "heldout")


@dataclass(frozen=True, slots=True)
class GoldItem:
    category: str
    attribute: str | None = None
    value: str | None = None
    date: str | None = None


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    text: str
    at: datetime
    expected: tuple[GoldItem, ...]
    split: str = "dev"
    speaker: str | None = None
    role: str = "user"

    def message(self) -> Message:
        role = self.role if self.role in ("user", "assistant", "system") else "user"
        return Message(role=role, content=self.text, at=self.at, speaker=self.speaker)  # type: ignore[arg-type]


def load(path: str | Path) -> list[Example]:
    """Parse the labelled file; raise `InvalidInput` naming the line of a malformed row."""
    examples = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            at = datetime.fromisoformat(row["at"].replace("Z", "+00:00"))
            expected = tuple(
                GoldItem(
                    category=item["category"],
                    attribute=item.get("attribute"),
                    value=item.get("value"),
                    date=item.get("date"),
                )
                for item in row["expected"]
            )
            examples.append(
                Example(
                    id=str(row["id"]),
                    text=row["text"],
                    at=at,
                    expected=expected,
                    split=row.get("split", "dev"),
                    speaker=row.get("speaker"),
                    role=row.get("role", "user"),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"{path}:{number}: malformed labelled example ({exc})") from exc
    return examples


def _value_agrees(gold: str, predicted: str | None) -> bool:
    if predicted is None:
        return False
    a, b = gold.casefold(), predicted.casefold()
    return a in b or b in a


def _match(predicted: Sequence[Candidate], gold: Sequence[GoldItem]) -> list[tuple[GoldItem, Candidate]]:
    """One-to-one pairs; gold items naming an attribute are matched first, value agreement preferred."""
    free = list(predicted)
    pairs = []
    for item in sorted(gold, key=lambda g: (g.attribute is None, g.value is None)):
        options = [
            c for c in free if c.category == item.category and (item.attribute is None or c.attribute == item.attribute)
        ]
        if not options:
            continue
        best = next((c for c in options if item.value and _value_agrees(item.value, c.value)), options[0])
        free.remove(best)
        pairs.append((item, best))
    return pairs


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _f1(precision: float | None, recall: float | None) -> float | None:
    if not precision or not recall:
        return 0.0 if precision is not None and recall is not None else None
    return round(2 * precision * recall / (precision + recall), 4)


def score(predictions: Sequence[Sequence[Candidate]], gold: Sequence[Sequence[GoldItem]]) -> dict[str, Any]:
    """Per-category and overall precision / recall / F1 of `predictions` against `gold` (aligned lists)."""
    if len(predictions) != len(gold):
        raise InvalidInput(f"{len(predictions)} prediction lists for {len(gold)} gold lists")
    tp = dict.fromkeys(CATEGORIES, 0)
    fp = dict.fromkeys(CATEGORIES, 0)
    fn = dict.fromkeys(CATEGORIES, 0)
    values = [0, 0]
    dates = [0, 0]
    negatives = [0, 0]
    for predicted, expected in zip(predictions, gold, strict=True):
        pairs = _match(predicted, expected)
        matched = {id(c) for _, c in pairs}
        for item, candidate in pairs:
            tp[item.category] += 1
            if item.value:
                values[0] += _value_agrees(item.value, candidate.value)
                values[1] += 1
            if item.date:
                got = candidate.event_time.date().isoformat() if candidate.event_time else None
                dates[0] += got == item.date
                dates[1] += 1
        for candidate in predicted:
            if id(candidate) not in matched:
                fp[candidate.category] = fp.get(candidate.category, 0) + 1
        for item in expected:
            if not any(item is g for g, _ in pairs):
                fn[item.category] = fn.get(item.category, 0) + 1
        if not expected:
            negatives[1] += 1
            negatives[0] += not predicted
    per_category = {}
    for category in CATEGORIES:
        precision = _ratio(tp[category], tp[category] + fp[category])
        recall = _ratio(tp[category], tp[category] + fn[category])
        per_category[category] = {
            "precision": precision,
            "recall": recall,
            "f1": _f1(precision, recall),
            "tp": tp[category],
            "fp": fp[category],
            "fn": fn[category],
        }
    total_tp, total_fp, total_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    precision = _ratio(total_tp, total_tp + total_fp)
    recall = _ratio(total_tp, total_tp + total_fn)
    return {
        "overall": {
            "precision": precision,
            "recall": recall,
            "f1": _f1(precision, recall),
            "tp": total_tp,
            "fp": total_fp,
            "fn": total_fn,
        },
        "per_category": per_category,
        "value_agreement": _ratio(values[0], values[1]),
        "date_accuracy": _ratio(dates[0], dates[1]),
        "negatives_clean": _ratio(negatives[0], negatives[1]),
        "examples": len(gold),
    }


def predict(examples: Iterable[Example], extractor: Extractor) -> list[list[Candidate]]:
    return [extractor.extract([example.message()]) for example in examples]


def _timed_predict(examples: Sequence[Example], extractor: Extractor) -> tuple[list[list[Candidate]], float]:
    """Predictions and the median milliseconds per message."""
    predictions, durations = [], []
    for example in examples:
        started = time.perf_counter()
        predictions.append(extractor.extract([example.message()]))
        durations.append((time.perf_counter() - started) * 1000)
    return predictions, statistics.median(durations) if durations else 0.0


def run(path: str | Path = DEFAULT_PATH, *, extractor: Extractor | None = None) -> dict[str, Any]:
    """Score `extractor` (default `RuleExtractor()`) on every split of the labelled file."""
    examples = load(path)
    chosen = extractor or RuleExtractor()
    predictions, median_ms = _timed_predict(examples, chosen)
    result: dict[str, Any] = {
        "benchmark": "extraction",
        "labelled_by": _labelled_by(path),
        "extractor": type(chosen).__name__,
        "median_ms_per_message": round(median_ms, 3),
        "path": str(path),
    }
    for split in (*SPLITS, "all"):
        indices = [i for i, e in enumerate(examples) if split == "all" or e.split == split]
        result[split] = score([predictions[i] for i in indices], [examples[i].expected for i in indices])
    return result


def _labelled_by(path: str | Path) -> str:
    """Who wrote a labelled set: every set shipped here was written by the project itself."""
    if Path(path).resolve().parent == DEFAULT_PATH.parent:
        return "the project (self-written: the same people wrote the rules and these sentences)"
    return "given on the command line"


def errors(
    path: str | Path = DEFAULT_PATH, *, split: str = "dev", extractor: Extractor | None = None
) -> list[dict[str, Any]]:
    """The examples of `split` the extractor gets wrong, with what it predicted (for error analysis)."""
    chosen = extractor or RuleExtractor()
    wrong = []
    for example in load(path):
        if example.split != split:
            continue
        predicted = chosen.extract([example.message()])
        pairs = _match(predicted, example.expected)
        if len(pairs) != len(example.expected) or len(pairs) != len(predicted):
            wrong.append(
                {
                    "id": example.id,
                    "text": example.text,
                    "expected": [item.__repr__() for item in example.expected],
                    "predicted": [(c.category, c.attribute, c.value, c.content) for c in predicted],
                }
            )
    return wrong


def main_json(path: str | Path = DEFAULT_PATH) -> dict[str, Any]:
    """The benchmark result as a JSON-ready dict (what `memstrata-bench extraction --json` prints)."""
    return run(path)


if __name__ == "__main__":  # pragma: no cover - manual entry point
    print(json.dumps(main_json(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PATH), indent=2))
