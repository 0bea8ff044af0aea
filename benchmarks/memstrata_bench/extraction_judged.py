"""Precision of extraction on text nobody here wrote, judged by hand and kept without the text.

Each extracted memory is keyed by a hash of the message it came from and its own wording; a judgment
file (JSONL: {"key", "ok", "why"}) records whether a person judged the memory correct. The sample is
the `size` pairs with the smallest keys (a stable pseudo-random sample that needs no seed), so a rule
change that alters a memory's wording puts a new, unjudged memory in its place: the result says how
many of the sample are judged, and `unjudged` lists the rest for a person to judge.

A memory is judged correct ("ok") when it is something the speaker said about themselves (or a
standing request), worth keeping past this conversation, worded faithfully in the third person, with
no wrong subject, polarity or date. Wrong: a misread (sarcasm, a question, someone else's fact taken as
the speaker's), a fragment that means nothing out of context, or a distorted value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata import InvalidInput
from memstrata.extraction.base import Candidate, Message


def key(message: Message, candidate: Candidate) -> str:
    """A stable key for one extracted memory: the message text and the memory's wording."""
    digest = hashlib.sha256(f"{message.content}\x00{candidate.content}".encode()).hexdigest()
    return digest[:16]


def sample(pairs: Sequence[tuple[Message, Candidate]], size: int) -> list[tuple[str, Message, Candidate]]:
    """The `size` distinct memories with the smallest keys."""
    keyed = {key(message, candidate): (message, candidate) for message, candidate in pairs}
    return [(k, *keyed[k]) for k in sorted(keyed)[:size]]


def load_judgments(path: str | Path) -> dict[str, bool]:
    """key -> ok from a judgment file; a missing file is an empty set of judgments."""
    file = Path(path)
    if not file.exists():
        return {}
    judged: dict[str, bool] = {}
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            judged[str(row["key"])] = bool(row["ok"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"{file}:{number}: malformed judgment ({exc})") from exc
    return judged


def judged_precision(
    pairs: Sequence[tuple[Message, Candidate]], judgments: dict[str, bool], *, size: int
) -> dict[str, Any]:
    """Precision over the judged part of the sample, and the unjudged memories left to judge."""
    chosen = sample(pairs, size)
    verdicts = [judgments[k] for k, _, _ in chosen if k in judgments]
    unjudged = [
        {"key": k, "message": message.content, "memory": candidate.content}
        for k, message, candidate in chosen
        if k not in judgments
    ]
    return {
        "sample": len(chosen),
        "judged": len(verdicts),
        "correct": sum(verdicts),
        "precision": round(sum(verdicts) / len(verdicts), 4) if verdicts else None,
        "unjudged": unjudged,
    }
