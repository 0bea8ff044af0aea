"""Extraction coverage of LoCoMo's `event_summary` facts (text the project did not write).

LoCoMo conversations are between two people, each speaking about themselves; every turn is given to
the extractor as a user message with its speaker's name and the session time. A summary fact
("Caroline attends an LGBTQ support group for the first time.") counts as covered when one memory
extracted from the same speaker's turns in the same session holds at least `THRESHOLD` of the fact's
content words (`overlap.coverage`, the speaker's name not counted). The summaries were written by
LoCoMo's authors from the whole session, so some facts are never said in one turn: the figure is a
floor for what extraction could keep.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstrata import InvalidInput
from memstrata.extraction.base import Candidate, Extractor, Message

from .locomo_data import parse_session_date
from .overlap import coverage

THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class SessionFacts:
    speaker: str
    facts: tuple[str, ...]
    turns: tuple[Message, ...]  # the speaker's turns in that session


def load(path: str | Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read LoCoMo file {path}: {exc}") from exc
    if not isinstance(data, list) or (data and "event_summary" not in data[0]):
        raise InvalidInput(f"{path}: not a LoCoMo file with event_summary (a list of conversations)")
    return data


def session_facts(sample: dict[str, Any]) -> Iterator[SessionFacts]:
    """Per session and speaker: the summary's facts and that speaker's turns."""
    conversation = sample["conversation"]
    for key, summary in sample["event_summary"].items():
        number = key.removeprefix("events_session_")
        turns = conversation.get(f"session_{number}", [])
        at = parse_session_date(conversation[f"session_{number}_date_time"])
        for speaker, facts in summary.items():
            if speaker == "date" or not facts:
                continue
            said = tuple(
                Message(role="user", content=str(t["text"]), at=at, speaker=speaker)
                for t in turns
                if t.get("speaker") == speaker and str(t.get("text", "")).strip()
            )
            yield SessionFacts(speaker, tuple(str(fact) for fact in facts), said)


def covered(fact: str, speaker: str, candidates: Sequence[Candidate]) -> bool:
    return any(coverage(fact, c.content, ignore=speaker.split()) >= THRESHOLD for c in candidates)


def run(path: str | Path, extractor: Extractor) -> tuple[dict[str, Any], list[tuple[Message, Candidate]]]:
    """Fact coverage, and every (turn, candidate) pair produced (for judged precision)."""
    facts = hits = turns = 0
    spent = 0.0
    produced: list[tuple[Message, Candidate]] = []
    for sample in load(path):
        for group in session_facts(sample):
            found = []
            for turn in group.turns:
                started = time.perf_counter()
                extracted = extractor.extract([turn])
                spent += time.perf_counter() - started
                for candidate in extracted:
                    found.append(candidate)
                    produced.append((turn, candidate))
            turns += len(group.turns)
            facts += len(group.facts)
            hits += sum(covered(fact, group.speaker, found) for fact in group.facts)
    return {
        "facts": facts,
        "covered": hits,
        "recall": round(hits / facts, 4) if facts else None,
        "turns": turns,
        "candidates": len(produced),
        "threshold": THRESHOLD,
        "extract_messages_per_s": round(turns / spent) if spent else None,
    }, produced
