"""Extraction recall on LongMemEval (text the project did not write).

For each single-session-user and knowledge-update question, every user turn of the evidence sessions
is given to the extractor (each turn with its session's date as the message time, sessions in date
order). The question counts as answered when an extracted memory contains every content word of the
answer (`overlap.contains_answer`; an answer "X (or Y)" accepts either). For knowledge-update
questions the answer is the newest value, so a hit means the new value was extracted; whether the old
one is then retired is resolution's job, not measured here.

Questions whose answer is not written in any evidence user turn (yes/no answers, answers that need
arithmetic or the assistant's words) cannot be met by extraction of what the user said and are left
out; how many is reported. The data file is read from the path given (never shipped).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata import InvalidInput
from memstrata.extraction.base import Candidate, Extractor, Message

from .overlap import contains_answer

QUESTION_TYPES = ("single-session-user", "knowledge-update")


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    type: str
    answers: tuple[str, ...]
    turns: tuple[Message, ...]  # the evidence sessions' user turns, oldest first


def load(path: str | Path) -> list[dict[str, Any]]:
    """The LongMemEval JSON array (plain or gzip-compressed)."""
    raw = Path(path)
    if not raw.is_file():
        raise InvalidInput(f"LongMemEval file not found: {raw}")
    opener = gzip.open if raw.suffix == ".gz" else open
    with opener(raw, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, list) or (data and "haystack_sessions" not in data[0]):
        raise InvalidInput(f"{raw}: not a LongMemEval file (a JSON array of questions with haystack_sessions)")
    return data


def session_time(raw: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 02:21" as a UTC time."""
    match = re.match(r"(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))? (\d{2}):(\d{2})", raw)
    if not match:
        raise InvalidInput(f"unreadable LongMemEval session date {raw!r}")
    year, month, day, hour, minute = map(int, match.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def answers(raw: object) -> tuple[str, ...]:
    """The accepted answers: "25 minutes and 50 seconds (or 25:50)" -> both forms."""
    text = str(raw).strip()
    match = re.match(r"^(?P<a>.+?)\s*\((?:or|also acceptable:?)\s+(?P<b>[^)]+)\)\s*$", text, re.I)
    return (match.group("a"), match.group("b")) if match else (text,)


def evidence_questions(data: Sequence[dict[str, Any]]) -> Iterator[Question]:
    """The answerable questions of the chosen types, with their evidence sessions' user turns."""
    for row in data:
        if row["question_type"] not in QUESTION_TYPES or str(row["question_id"]).endswith("_abs"):
            continue
        sessions = [
            (session_time(when), turns)
            for sid, when, turns in zip(
                row["haystack_session_ids"], row["haystack_dates"], row["haystack_sessions"], strict=True
            )
            if sid in row["answer_session_ids"]
        ]
        turns = tuple(
            Message(role="user", content=turn["content"], at=at)
            for at, session in sorted(sessions, key=lambda pair: pair[0])
            for turn in session
            if turn["role"] == "user"
        )
        yield Question(str(row["question_id"]), row["question_type"], answers(row["answer"]), turns)


def stated(question: Question) -> bool:
    """True when an accepted answer is written in one of the evidence user turns."""
    return any(contains_answer(answer, turn.content) for answer in question.answers for turn in question.turns)


def answered(question: Question, candidates: Sequence[Candidate]) -> bool:
    return any(contains_answer(answer, c.content) for answer in question.answers for c in candidates)


def run(path: str | Path, extractor: Extractor) -> tuple[dict[str, Any], list[tuple[Message, Candidate]]]:
    """Recall per question type, and every (turn, candidate) pair produced (for judged precision)."""
    per_type: dict[str, list[bool]] = {kind: [] for kind in QUESTION_TYPES}
    unstated = dict.fromkeys(QUESTION_TYPES, 0)
    produced: list[tuple[Message, Candidate]] = []
    turns = 0
    for question in evidence_questions(load(path)):
        if not stated(question):
            unstated[question.type] += 1
            continue
        found = []
        for turn in question.turns:
            for candidate in extractor.extract([turn]):
                found.append(candidate)
                produced.append((turn, candidate))
        turns += len(question.turns)
        per_type[question.type].append(answered(question, found))
    every = [hit for hits in per_type.values() for hit in hits]
    result: dict[str, Any] = {
        "questions": len(every),
        "user_turns": turns,
        "candidates": len(produced),
        "recall": round(sum(every) / len(every), 4) if every else None,
        "left_out_answer_not_stated": unstated,
    }
    for kind, hits in per_type.items():
        result[kind] = {"questions": len(hits), "answered": sum(hits)}
    return result, produced
