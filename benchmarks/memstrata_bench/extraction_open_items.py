"""Open-item recall and precision on real LongMemEval user sentences.

    python -m memstrata_bench.extraction_open_items --longmemeval longmemeval_s_dev100.json.gz
    python -m memstrata_bench.extraction_open_items --longmemeval ... --dump 80   # the sample, to label

The sample: every user sentence of the development file's sessions (each session once) that holds an
open-item cue (`CUE`: "remind me", "I still need to", "don't let me forget", "I have to", "follow up",
"I should", "I need to remember", ...), in the order of the hash of its id, the first 130 (`SPLITS`). A cue is
not an open item by itself: the sample holds the questions to the assistant, hypotheticals and past
reports the cues also appear in. Labels (`benchmarks/extraction/open-items-longmemeval-labels.jsonl`,
one row per id: `{"id", "split", "open_item"}`) say whether the sentence gives the user something still to do
that a memory should hold; they are self-labelled on others' text (by the author of the rules) and the
text is read from the data file, never stored. A sentence counts as found when the rule extractor
returns an `open_item` candidate for it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.segment import sentences

from .extraction_longmemeval import session_time

LABELS = Path(__file__).resolve().parents[1] / "extraction" / "open-items-longmemeval-labels.jsonl"
LABELLED_BY = "self-labelled on others' text: labels by the author of the rules on LongMemEval users' sentences"
SPLITS = ("dev", "heldout")
"""dev: the first 80 sentences, labelled seeing the rules' output and then tuned on; heldout: the next
50, labelled without seeing it and scored once after the rules were written."""
CUE = re.compile(
    r"\bremind me\b|\bdon'?t let me forget\b|\bdon'?t forget\b|\bfollow[ -]up\b|\bto-?do\b"
    r"|\bI(?:'ll| will)? (?:still |really |also |definitely )?(?:need|have|has|ought|got) to\b"
    r"|\bI(?:'ve| have) got to\b"
    r"|\bI (?:still |really |also |definitely )?(?:should|must)\b|\bI'?m supposed to\b|\bgotta\b|\bremember to\b",
    re.IGNORECASE,
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cue_sentences(path: str | Path) -> list[tuple[str, str, Any]]:
    """(id, sentence, session time) of every user sentence with a cue, in hash order of the id."""
    raw = Path(path)
    opener = gzip.open if raw.suffix == ".gz" else open
    with opener(raw, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    seen: set[str] = set()
    out = []
    for row in data:
        for sid, when, session in zip(
            row["haystack_session_ids"], row["haystack_dates"], row["haystack_sessions"], strict=True
        ):
            if sid in seen:
                continue
            seen.add(sid)
            for index, turn in enumerate(session):
                if turn["role"] != "user":
                    continue
                for number, sentence in enumerate(sentences(str(turn["content"]))):
                    if 4 <= len(sentence.split()) <= 60 and CUE.search(sentence):
                        out.append((f"longmemeval:{sid}:{index}:{number}", sentence, session_time(when)))
    return sorted(out, key=lambda item: _digest(item[0]))


def found(sentence: str, at: Any, extractor: RuleExtractor) -> list[str]:
    """The open items the extractor finds in one user sentence (their contents)."""
    return [c.content for c in extractor.extract([Message("user", sentence, at)]) if c.category == "open_item"]


def load_labels(path: Path = LABELS, split: str | None = None) -> dict[str, bool]:
    """id -> open item or not, of every row (of `split` only, when given)."""
    labels = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if split is None or row.get("split") == split:
                labels[str(row["id"])] = bool(row["open_item"])
    return labels


def evaluate(path: str | Path, labels: dict[str, bool]) -> dict[str, Any]:
    """Recall and precision of the rule extractor's open items on the labelled cue sentences of `path`."""
    extractor = RuleExtractor()
    sample = [item for item in cue_sentences(path) if item[0] in labels]
    tp = fp = fn = 0
    misses, wrong = [], []
    for turn_id, sentence, at in sample:
        predicted = bool(found(sentence, at, extractor))
        if predicted and labels[turn_id]:
            tp += 1
        elif predicted:
            fp += 1
            wrong.append(turn_id)
        elif labels[turn_id]:
            fn += 1
            misses.append(turn_id)
    return {
        "benchmark": "extraction-open-items-longmemeval",
        "labelled_by": LABELLED_BY,
        "sentences": len(sample),
        "open_items": tp + fn,
        "found": tp,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "false_positives": wrong,
        "missed": misses,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--dump", type=int, help="print the first N cue sentences (id, text, found) to label")
    parser.add_argument("--out", type=Path, help="write the score as JSON here")
    args = parser.parse_args(argv)
    if args.dump:
        extractor = RuleExtractor()
        for turn_id, sentence, at in cue_sentences(args.longmemeval)[: args.dump]:
            print(json.dumps({"id": turn_id, "text": sentence, "found": found(sentence, at, extractor)}))
        return 0
    result = {split: evaluate(args.longmemeval, load_labels(split=split)) for split in SPLITS}
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
