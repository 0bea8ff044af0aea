"""LoCoMo loading for the retrieval study: one document per turn, questions of categories 1-4."""

from __future__ import annotations

from pathlib import Path
import os

import json
import re
from dataclasses import dataclass

DEV = os.environ.get("LOCOMO", str(Path(__file__).resolve().parents[3] / "shared/data/locomo/locomo-dev.json"))
_EVID = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    session: int
    index: int  # turn index within the session (0-based)
    date: str  # session date-time string
    text: str  # "{speaker}: {text}" [+ " [shares a photo: caption]"]
    raw: str  # the turn's own text only


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]


def normalize_evidence(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        for m in _EVID.finditer(item):
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(out))


def load(path: str = DEV) -> list[Conversation]:
    convs = []
    for sample in json.load(open(path)):
        c = sample["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in c:
            date = c[f"session_{n}_date_time"]
            for i, t in enumerate(c[f"session_{n}"]):
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], t["speaker"], n, i, date, text, t["text"]))
            n += 1
        ids = {t.dia_id for t in turns}
        qs = []
        for q in sample["qa"]:
            if q["category"] == 5:
                continue
            ev = tuple(e for e in normalize_evidence(q.get("evidence", [])) if e in ids)
            if not ev:
                continue
            qs.append(Question(q["question"], int(q["category"]), ev))
        convs.append(Conversation(sample["sample_id"], (c["speaker_a"], c["speaker_b"]), turns, qs))
    return convs


if __name__ == "__main__":
    cs = load()
    for cv in cs:
        print(cv.sample_id, len(cv.turns), len(cv.questions), cv.speakers)
    print(sum(len(c.questions) for c in cs), "questions")
