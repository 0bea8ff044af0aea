"""Do two versions of the offline extractor produce the same candidates on every message?

Runs `RuleExtractor()` (the default: rules and the learned store-worthiness path) over every LoCoMo dev
turn (each speaker's message as a user message of its session date) and every distinct LongMemEval
user turn, once with the memstrata package found in BEFORE and once with this one, each in its own
interpreter, and compares each message's candidates: same number, same order, every field equal
(`repr` of each `Candidate`, floats included). Only counts are written, no text of the data.

    PYTHONPATH=$PWD python benchmarks/extraction_equality.py --before /tmp/h7old \
        --locomo /work/shared/data/locomo/locomo-dev.json \
        --longmemeval /work/shared/data/longmemeval/longmemeval_s_dev100.json.gz \
        --out benchmarks/results/extraction-equality-worthiness-speed.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

_DUMP = """
import hashlib, json, sys
from memstrata.bench.extraction_locomo import load as load_locomo
from memstrata.bench.extraction_longmemeval import load as load_longmemeval, session_time
from memstrata.bench.locomo_data import parse_session_date
from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor

def messages(locomo, longmemeval):
    for sample in load_locomo(locomo):
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            at = parse_session_date(conversation[f"{key}_date_time"])
            for turn in turns:
                if str(turn.get("text", "")).strip():
                    yield Message(role="user", content=str(turn["text"]), at=at, speaker=str(turn["speaker"]))
    seen = set()
    for question in load_longmemeval(longmemeval):
        for sid, date, session in zip(question["haystack_session_ids"], question["haystack_dates"],
                                      question["haystack_sessions"], strict=True):
            if sid in seen:
                continue
            seen.add(sid)
            for turn in session:
                if turn["role"] == "user" and turn["content"].strip():
                    yield Message(role="user", content=turn["content"], at=session_time(date))

extractor = RuleExtractor()
for message in messages(sys.argv[1], sys.argv[2]):
    found = [repr(c) for c in extractor.extract([message])]
    print(json.dumps([len(found), hashlib.sha256("\\n".join(found).encode()).hexdigest()]))
"""


def dump(source: Path, locomo: str, longmemeval: str) -> list[tuple[int, str]]:
    """Per message, in order: how many candidates and a digest of all their fields."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run(
        [sys.executable, "-c", _DUMP, locomo, longmemeval],
        cwd=source, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [tuple(json.loads(line)) for line in done.stdout.splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a directory holding the memstrata package to compare with")
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    locomo, longmemeval = str(Path(args.locomo).resolve()), str(Path(args.longmemeval).resolve())
    before = dump(Path(args.before).resolve(), locomo, longmemeval)
    after = dump(Path(__file__).resolve().parents[1], locomo, longmemeval)
    differing = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    result = {
        "benchmark": "extraction-equality",
        "what": "RuleExtractor() candidates per message, before vs after: count and every field (repr digest)",
        "before": str(args.before),
        "messages": len(after),
        "messages_with_candidates": sum(1 for n, _ in after if n),
        "candidates_before": sum(n for n, _ in before),
        "candidates_after": sum(n for n, _ in after),
        "messages_differing": len(differing),
        "first_differing_indexes": differing[:20],
        "digest_before": hashlib.sha256(json.dumps(before).encode()).hexdigest(),
        "digest_after": hashlib.sha256(json.dumps(after).encode()).hexdigest(),
        "identical": not differing and len(before) == len(after),
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
