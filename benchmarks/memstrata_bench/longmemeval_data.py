"""Reading LongMemEval (upstream JSON, optionally gzipped) and its retrieval metrics (pure, no memstrata I/O).

Every question has its own haystack of sessions; each question becomes one `Conversation` (the shape
`bench locomo` and `bench peers` already ingest): every turn of every session, both roles, with the
session's date, the turn id `<session id>:<turn index>`, and the question's evidence turns (`has_answer`).

Metrics are those of the paper's `eval_utils.py`: `recall_any@k`, `recall_all@k` and `ndcg_any@k` over a
ranking of documents. A ranking of turns converts to a ranking of sessions by taking each session at its
best turn's rank.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstrata import InvalidInput

from .locomo_data import Conversation, Question, Turn

TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
TURN_SEPARATOR = ":"
SEARCH_K = 50
"""Hits asked per question: enough for turn recall@50 and, through their sessions, session metrics @10."""


@dataclass(frozen=True, slots=True)
class Case:
    """One LongMemEval question with its haystack as a `Conversation` (one question in it)."""

    question_id: str
    question_type: str
    question: str
    asked_at: datetime
    answer_sessions: tuple[str, ...]
    evidence_turns: tuple[str, ...]
    conversation: Conversation

    @property
    def sessions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(session_of(t.dia_id) for t in self.conversation.turns))


def parse_date(text: str) -> datetime:
    """'2023/05/30 (Tue) 23:27' → an aware UTC datetime."""
    try:
        return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)
    except (ValueError, AttributeError):
        raise InvalidInput(f"unrecognized LongMemEval date {text!r}") from None


def visible_until(asked_at: datetime) -> datetime:
    """The last instant a search for a question asked at `asked_at` may see: the end of its day.

    LongMemEval dates sessions and questions to the minute, but the minutes within the question's day are
    not ordered with the question (in the development set 20 evidence sessions fall on the question's day
    after its minute, none on a later day), so the question's day is what it can see.
    """
    start = asked_at.replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1) - timedelta(microseconds=1)


def turn_id(session_id: str, index: int) -> str:
    return f"{session_id}{TURN_SEPARATOR}{index}"


def session_of(turn: str) -> str:
    """The session id of a turn id (`turn_id`'s inverse; session ids may contain the separator)."""
    return turn.rsplit(TURN_SEPARATOR, 1)[0]


MAX_TURN_BYTES = 60_000
"""Longer turns are cut to this many bytes (a memory holds at most 64 KiB; one turn of the development set
is longer, and it is not evidence)."""


def fit_text(text: str) -> str:
    data = text.encode("utf-8")
    return text if len(data) <= MAX_TURN_BYTES else data[:MAX_TURN_BYTES].decode("utf-8", "ignore")


def parse_case(raw: dict[str, Any]) -> Case:
    try:
        ids, dates, sessions = raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"]
        question_id, asked = str(raw["question_id"]), parse_date(raw["question_date"])
    except KeyError as exc:
        raise InvalidInput(f"LongMemEval question lacks {exc.args[0]!r}") from None
    if not len(ids) == len(dates) == len(sessions):
        raise InvalidInput(f"question {question_id}: haystack ids, dates and sessions differ in length")
    turns: list[Turn] = []
    evidence: list[str] = []
    for number, (session_id, date, session) in enumerate(zip(ids, dates, sessions, strict=True), start=1):
        at = parse_date(date)
        for index, turn in enumerate(session):
            content = fit_text(str(turn.get("content", "")).strip())
            if not content:
                continue
            dia_id = turn_id(str(session_id), index)
            turns.append(Turn(dia_id, str(turn.get("role", "user")), content, number, index, at, date))
            if turn.get("has_answer"):
                evidence.append(dia_id)
    question = Question(str(raw["question"]), str(raw["question_type"]), tuple(evidence), asked)
    conversation = Conversation(f"lme-{question_id}", tuple(turns), (question,))
    answers = tuple(str(s) for s in raw.get("answer_session_ids", []))
    return Case(
        question_id, str(raw["question_type"]), question.question, asked, answers, tuple(evidence), conversation
    )


def load(path: str | Path, *, limit: int | None = None) -> list[Case]:
    """The scored questions of a LongMemEval file: abstention questions (`_abs`) are left out, as in the paper."""
    try:
        raw_bytes = Path(path).read_bytes()
        text = gzip.decompress(raw_bytes) if raw_bytes[:2] == b"\x1f\x8b" else raw_bytes
        data = json.loads(text)
    except (OSError, json.JSONDecodeError, gzip.BadGzipFile) as exc:
        raise InvalidInput(f"cannot read LongMemEval file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise InvalidInput(f"{path} is not in LongMemEval format (expected a list of questions)")
    scored = [q for q in data if not str(q.get("question_id", "")).endswith("_abs")]
    return [parse_case(q) for q in scored[: limit or None]]


# -- metrics (the paper's eval_utils) -----------------------------------------------------------------
def session_ranking(turns: Sequence[str]) -> list[str]:
    """Sessions ordered by their best turn's rank."""
    return list(dict.fromkeys(session_of(t) for t in turns))


def recall_any(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranked[:k])
    return float(any(e in top for e in evidence))


def recall_all(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranked[:k])
    return float(all(e in top for e in evidence))


def recall_fraction(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The share of the evidence found in the top k (as `bench locomo` scores turns)."""
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence) if evidence else 0.0


def _dcg(relevances: Sequence[float], k: int) -> float:
    head = list(relevances[:k])
    if not head:
        return 0.0
    return head[0] + sum(r / math.log2(i) for i, r in enumerate(head[1:], start=2))


def ndcg_any(ranked: Sequence[str], evidence: Sequence[str], k: int, corpus_size: int) -> float:
    """nDCG@k with binary relevance, the ideal ranking putting all `evidence` first (as eval_utils does)."""
    wanted = set(evidence)
    ideal = _dcg([1.0] * min(len(wanted), corpus_size), k)
    return _dcg([1.0 if d in wanted else 0.0 for d in ranked], k) / ideal if ideal else 0.0


def score_case(case: Case, ranked_turns: Sequence[str], *, granularity: str = "turn") -> dict[str, float]:
    """Every metric of one question from its ranking (turn ids, or session ids at session granularity)."""
    sessions = session_ranking(ranked_turns) if granularity == "turn" else list(ranked_turns)
    answers = case.answer_sessions
    row = {
        "session_recall_any@5": recall_any(sessions, answers, 5),
        "session_recall_any@10": recall_any(sessions, answers, 10),
        "session_recall_all@5": recall_all(sessions, answers, 5),
        "session_recall_all@10": recall_all(sessions, answers, 10),
        "session_ndcg@10": ndcg_any(sessions, answers, 10, len(case.sessions)),
    }
    if granularity == "turn" and case.evidence_turns:
        row["turn_recall@10"] = recall_fraction(ranked_turns, case.evidence_turns, 10)
        row["turn_recall@50"] = recall_fraction(ranked_turns, case.evidence_turns, 50)
    return row


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of every metric over the rows that have it (turn metrics skip questions without evidence turns)."""
    keys = dict.fromkeys(k for row in rows for k in row)
    return {k: round(sum(r[k] for r in rows if k in r) / sum(1 for r in rows if k in r), 4) for k in keys}
