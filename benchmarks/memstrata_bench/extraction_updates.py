"""Do restated values retire the old ones? LongMemEval's knowledge-update questions, learned offline.

    python -m memstrata_bench.extraction_updates --longmemeval longmemeval_s_dev100.json.gz \\
        --out benchmarks/results/extraction-updates.json
    python -m memstrata_bench.extraction_updates --longmemeval ... --between   # with the sessions between

Each knowledge-update question of LongMemEval names two evidence sessions: one where the user states a
value ("I recently set a personal best time in a charity 5K run with a time of 27:12") and a later one
where they state it again, changed ("I'm hoping to beat my personal best time of 25:50"). The labels
(`benchmarks/extraction/updates-longmemeval-labels.jsonl`, one row per question: the two sessions, the
turn of each that states the value, and a short marker of the old and of the new value) are
self-labelled on others' text by the author of the rules; the conversations are read from the data
file, never stored.

Per item, a fresh offline `Memory` (SQLite, the default embedder, the rule extractor) learns the user's
turns of the old session, then of the new one (with `--between`, also every haystack session dated
between them, in order), each session as one `learn` dated at the session's time, as an agent would.
Then:

- (a) stored: a memory learned from the old session names the old value;
- (b) retired: every such memory is out of the current memories and kept in history;
- (c) current: a current memory names the new value.

The retire rate is the items with (b) and (c) over the items with (a): a value never stored cannot be
retired, and extraction recall is measured elsewhere (`extraction_realistic`, `extraction_longmemeval`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata import Memory, MemoryRecord, Scope, SearchFilter
from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.messages import MAX_CONTENT_BYTES

from .extraction_longmemeval import session_time

LABELS = Path(__file__).resolve().parents[1] / "extraction" / "updates-longmemeval-labels.jsonl"
LABELLED_BY = "self-labelled on others' text: labels by the author of the rules on LongMemEval sessions"
SPLITS = ("dev", "heldout")
"""dev: the first 9 questions in file order, tuned on; heldout: the other 8, scored once after the rules were
written (their text was read while labelling, their results were not looked at before that score)."""


def load_labels(path: Path = LABELS, split: str | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if split is None or row["split"] == split]


def load_questions(path: str | Path) -> dict[str, dict[str, Any]]:
    raw = Path(path)
    opener = gzip.open if raw.suffix == ".gz" else open
    with opener(raw, "rt", encoding="utf-8") as handle:
        return {row["question_id"]: row for row in json.load(handle)}


def _names(record: MemoryRecord, marker: str) -> bool:
    return marker.casefold() in " ".join(record.content.split()).casefold()


def _user_turns(session: Sequence[dict[str, Any]], at: Any) -> list[Message]:
    """The session's user turns; a turn over `learn`'s size limit (a pasted document) is left out."""
    said = (str(turn["content"]) for turn in session if turn["role"] == "user")
    return [Message("user", text, at) for text in said if len(text.encode()) <= MAX_CONTENT_BYTES]


def run_item(question: dict[str, Any], label: dict[str, Any], *, between: bool = False) -> dict[str, Any]:
    """Learn the item's sessions into a fresh memory and check (a), (b) and (c)."""
    ids = question["haystack_session_ids"]
    first, last = ids.index(label["old_session"]), ids.index(label["new_session"])
    order = range(first, last + 1) if between else (first, last)
    scope = Scope("user")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(store=f"sqlite:///{Path(tmp) / 'm.db'}", extractor=RuleExtractor()) as memory,
    ):
        old_ids: set[str] = set()
        for index in order:
            at = session_time(question["haystack_dates"][index])
            messages = _user_turns(question["haystack_sessions"][index], at)
            if not messages:
                continue
            learned = memory.learn(messages, scope=scope).memories
            if index == first:
                old_ids = {r.id for r in learned if _names(r, label["old"])}
        current = memory.list(scope=scope, limit=5000)
        everything = memory.list(scope=scope, limit=5000, filters=SearchFilter(include_superseded=True))
    current_ids = {r.id for r in current}
    kept = {r.id: r for r in everything}
    stored = bool(old_ids)
    retired = stored and not old_ids & current_ids and old_ids <= kept.keys()
    new_current = [r.content for r in current if _names(r, label["new"])]
    return {
        "question_id": label["question_id"],
        "split": label["split"],
        "stored": stored,
        "retired": retired,
        "new_current": bool(new_current),
        "passed": retired and bool(new_current),
        "old_memories": len(old_ids),
        "old_still_current": len(old_ids & current_ids),
        "new_memories": len(new_current),
        "sessions_learned": len(order),
        "shown": {  # the memories' text, for --show only: it words the data set's conversations
            "old": [kept[i].content for i in sorted(old_ids) if i in kept],
            "old_still_current": [kept[i].content for i in sorted(old_ids & current_ids)],
            "new": new_current,
        },
    }


def evaluate(path: str | Path, labels: Sequence[dict[str, Any]], *, between: bool = False) -> dict[str, Any]:
    questions = load_questions(path)
    items = [run_item(questions[label["question_id"]], label, between=between) for label in labels]
    stored = [item for item in items if item["stored"]]
    passed = [item for item in stored if item["passed"]]
    return {
        "items": len(items),
        "stored": len(stored),
        "retired_and_new_current": len(passed),
        "retire_rate": round(len(passed) / len(stored), 4) if stored else None,
        "per_item": items,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--split", choices=SPLITS, help="score one split only (default: both)")
    parser.add_argument("--between", action="store_true", help="also learn the haystack sessions between the two")
    parser.add_argument("--out", type=Path, help="write the score as JSON here (without the memories' text)")
    parser.add_argument("--show", action="store_true", help="print each item's memories (text from the data set)")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {
        "benchmark": "extraction-updates-longmemeval",
        "labelled_by": LABELLED_BY,
        "between_sessions": args.between,
    }
    for split in (args.split,) if args.split else SPLITS:
        result[split] = evaluate(args.longmemeval, load_labels(split=split), between=args.between)
        for item in result[split]["per_item"]:
            shown = item.pop("shown")
            if args.show:
                print(json.dumps({"question_id": item["question_id"], "passed": item["passed"], **shown}))
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    summary = {s: {k: v for k, v in result[s].items() if k != "per_item"} for s in SPLITS if s in result}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
