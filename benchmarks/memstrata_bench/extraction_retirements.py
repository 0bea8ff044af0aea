"""How many memories does `learn` retire over whole conversations that state few changes? (false retirements)

    python -m memstrata_bench.extraction_retirements --locomo locomo-dev.json \\
        --longmemeval longmemeval_s_dev100.json.gz --out benchmarks/results/extraction-retirements.json
    python -m memstrata_bench.extraction_retirements ... --show    # print each retired memory and its successor

The update rules (`memstrata/extraction/changes.py`, `switches.py`, `completions.py`) must retire a value
the user restates, and nothing else. This counts what they retire over conversations written by others
in which almost nothing the user says replaces something said before: every session of each LoCoMo
conversation, once per speaker (that speaker's turns as the user's messages), and the whole haystack
of the first 8 LongMemEval questions in file order that are not knowledge-update questions. Each
conversation is learned into a fresh offline `Memory` (SQLite, the default embedder, the rule
extractor), one `learn` per session dated at the session's time, as an agent would.

A retirement is not wrong by itself (a speaker may say "I've been here for 3 years now" after "2 years",
or report an open item done), so the count is compared before and after a change to the rules, and the
retired memories are read (`--show`: the memory, what it became history of, from the data set's text).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memstrata import Memory, Scope, SearchFilter
from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.messages import MAX_CONTENT_BYTES

from . import locomo_data
from .extraction_longmemeval import session_time

LONGMEMEVAL_HISTORIES = 8


def _learn_sessions(sessions: Iterable[tuple[datetime, list[str]]]) -> list[dict[str, str]]:
    """Learn each session's user texts into a fresh memory; the memories retired, with what replaced them."""
    scope = Scope("user")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(store=f"sqlite:///{Path(tmp) / 'm.db'}", extractor=RuleExtractor()) as memory,
    ):
        for at, texts in sessions:
            messages = [Message("user", t, at) for t in texts if t.strip() and len(t.encode()) <= MAX_CONTENT_BYTES]
            if messages:
                memory.learn(messages, scope=scope)
        everything = memory.list(scope=scope, limit=100_000, filters=SearchFilter(include_superseded=True))
    by_id = {r.id: r for r in everything}
    retired = []
    for record in everything:
        if record.valid_to is None:
            continue
        successor = by_id.get(record.superseded_by or "")
        retired.append({"retired": record.content, "by": successor.content if successor else ""})
    return retired


def locomo_histories(path: str | Path) -> Iterable[tuple[str, list[tuple[datetime, list[str]]]]]:
    for conversation in locomo_data.load(path):
        speakers = sorted({turn.speaker for turn in conversation.turns})
        for speaker in speakers:
            sessions: dict[int, tuple[datetime, list[str]]] = {}
            for turn in conversation.turns:
                if turn.speaker == speaker:
                    sessions.setdefault(turn.session, (turn.at, []))[1].append(turn.text)
            yield f"locomo:{conversation.sample_id}:{speaker}", [sessions[k] for k in sorted(sessions)]


def longmemeval_histories(
    path: str | Path, limit: int = LONGMEMEVAL_HISTORIES
) -> Iterable[tuple[str, list[tuple[datetime, list[str]]]]]:
    raw = Path(path)
    opener = gzip.open if raw.suffix == ".gz" else open
    with opener(raw, "rt", encoding="utf-8") as handle:
        questions = json.load(handle)
    chosen = [q for q in questions if q.get("question_type") != "knowledge-update"][:limit]
    for question in chosen:
        dated = sorted(zip(question["haystack_dates"], question["haystack_sessions"], strict=True), key=lambda p: p[0])
        sessions = [
            (session_time(date), [str(t["content"]) for t in session if t["role"] == "user"]) for date, session in dated
        ]
        yield f"longmemeval:{question['question_id']}", sessions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--histories", type=int, default=LONGMEMEVAL_HISTORIES, help="LongMemEval histories to learn")
    parser.add_argument("--out", type=Path, help="write the counts as JSON here (without the memories' text)")
    parser.add_argument("--show", action="store_true", help="print each retired memory (text from the data set)")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "extraction-retirements"}
    for name, histories in (
        ("locomo", locomo_histories(args.locomo)),
        ("longmemeval", longmemeval_histories(args.longmemeval, args.histories)),
    ):
        per_history = {}
        for key, sessions in histories:
            retired = _learn_sessions(sessions)
            per_history[key] = len(retired)
            for row in retired if args.show else ():
                print(json.dumps({"history": key, **row}))
        result[name] = {"histories": len(per_history), "retired": sum(per_history.values()), "per_history": per_history}
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: {"histories": v["histories"], "retired": v["retired"]} for k, v in result.items() if k != "benchmark"}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
