"""Reading LoCoMo (locomo10.json format) into turns and questions (pure, no memstrata I/O)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata import InvalidInput

CATEGORIES = ("1", "2", "3", "4")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    index: int
    at: datetime
    session_date: str

    @property
    def document(self) -> str:
        """The turn as indexed: "Speaker: text", plus a shared photo's caption (as LoCoMo's baselines do)."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    category: str
    evidence: tuple[str, ...]
    asked_at: datetime | None = None
    """When the question is asked, if the benchmark says (LongMemEval); LoCoMo's questions are undated."""


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → an aware UTC datetime."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInput(f"unrecognized LoCoMo session date {text!r}") from None


def normalize_evidence(raw: list[str]) -> list[str]:
    """Fix malformed evidence ids ('D8:6; D9:17', 'D:11:26', 'D30:05') into 'D<s>:<t>' ids."""
    found: list[str] = []
    for item in raw:
        for session, turn in _DIA_ID.findall(str(item)):
            found.append(f"D{int(session)}:{int(turn)}")
    return list(dict.fromkeys(found))


def _turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def parse_conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    turns: list[Turn] = []
    session = 1
    while f"session_{session}" in conv:
        date_text = conv.get(f"session_{session}_date_time", "")
        at = parse_session_date(date_text)
        for index, turn in enumerate(conv[f"session_{session}"]):
            dia_id = normalize_evidence([turn["dia_id"]])[0]
            turns.append(Turn(dia_id, turn["speaker"], _turn_text(turn), session, index, at, date_text))
        session += 1
    known = {t.dia_id for t in turns}
    questions = []
    for qa in sample.get("qa", []):
        category = str(qa.get("category"))
        evidence = tuple(e for e in normalize_evidence(qa.get("evidence", [])) if e in known)
        if category in CATEGORIES and evidence:
            questions.append(Question(str(qa["question"]), category, evidence))
    return Conversation(str(sample.get("sample_id", len(turns))), tuple(turns), tuple(questions))


def load(path: str | Path) -> list[Conversation]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read LoCoMo file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise InvalidInput(f"{path} is not in locomo10.json format (expected a list of conversations)")
    return [parse_conversation(sample) for sample in data]


def evidence_recall(evidence: tuple[str, ...], hits: list[tuple[str, ...]], k: int) -> float:
    """Fraction of the evidence dia_ids found in the provenance of the first k hits."""
    top = {dia_id for provenance in hits[:k] for dia_id in provenance}
    return sum(1 for e in evidence if e in top) / len(evidence)
