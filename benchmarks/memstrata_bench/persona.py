"""`memstrata-bench persona`: does `context()` bring what an assistant needs to advise this user?

Self-labelled questions on others' text: `benchmarks/persona/labels.json` names LongMemEval_S haystacks
(each one user's ~50 past sessions) and, for advice/planning questions written for this benchmark
("What should I listen to on my way to work?"), the user turns (`<session id>:<turn index>`) whose content
an answer for this user needs. Every user turn of a haystack is stored as an episode (`add_message`, one
session per haystack session) and learned from on its own (`learn`, offline extraction), so each learned
memory is known to come from one turn; then `context(question, budget)` is assembled per question and budget.

Metrics per budget:

* `required_in_context` — share of questions all of whose required turns appear in the context: the turn's
  text (whitespace-flattened, as the memories part renders it) or a memory learned from it;
* `filler_share` — share of the memories part's lines that are filler (`core.context_rank.is_filler`);
* `context_tokens_mean` — mean tokens of the whole context.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memstrata import InvalidInput, Memory
from memstrata.core.context_rank import is_filler
from memstrata.models import Scope

from .longmemeval_data import turn_id

LABELS = Path(__file__).resolve().parent.parent / "persona" / "labels.json"
DEFAULT_BUDGETS = (1000, 2000)


def _flat(text: str) -> str:
    return " ".join(text.split())


def read_labels(path: str | Path = LABELS) -> list[dict[str, Any]]:
    """The labelled questions: id, haystack (LongMemEval question id), question, required turn ids."""
    questions = json.loads(Path(path).read_text(encoding="utf-8"))["questions"]
    for q in questions:
        if not (q.get("id") and q.get("haystack") and q.get("question") and q.get("required")):
            raise InvalidInput(f"persona label {q!r} needs id, haystack, question and required turns")
    return list(questions)


def user_turns(raw_sessions: Sequence[Sequence[dict[str, Any]]], session_ids: Sequence[str]) -> dict[str, str]:
    """Turn id -> content of every user turn of a haystack."""
    return {
        turn_id(sid, i): turn["content"]
        for sid, session in zip(session_ids, raw_sessions, strict=True)
        for i, turn in enumerate(session)
        if turn["role"] == "user"
    }


def in_context(
    required: Sequence[str], turns: dict[str, str], text: str, learned: Mapping[str, Sequence[str]] | None = None
) -> bool:
    """Whether every required turn is in the context text: its (flattened) text, or the text of a memory
    `learn` stored from it (`learned`: turn id -> contents)."""
    flat = _flat(text)
    found = learned or {}
    return all(any(_flat(t) in flat for t in [turns[r], *found.get(r, ())]) for r in required)


def filler_lines(text: str) -> tuple[int, int]:
    """(filler lines, all lines) of the memories part in a context text."""
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    bodies = [line.split("] ", 1)[-1].removeprefix("user: ").removeprefix("assistant: ") for line in lines]
    return sum(is_filler(b) for b in bodies), len(bodies)


def run(
    data: str | Path,
    *,
    labels: str | Path = LABELS,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    embedder: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    questions = read_labels(labels)
    wanted = {q["haystack"] for q in questions}
    raw = {r["question_id"]: r for r in _raw(data) if r["question_id"] in wanted}
    missing = wanted - set(raw)
    if missing:
        raise InvalidInput(f"haystacks {sorted(missing)} are not in {data}")
    found: dict[int, list[bool]] = {b: [] for b in budgets}
    filler: dict[int, list[tuple[int, int]]] = {b: [] for b in budgets}
    tokens: dict[int, list[int]] = {b: [] for b in budgets}
    per_question: dict[str, dict[int, bool]] = {}
    started = time.perf_counter()
    for haystack in sorted(wanted):
        case = raw[haystack]
        turns = user_turns(case["haystack_sessions"], case["haystack_session_ids"])
        with (
            tempfile.TemporaryDirectory() as tmp,
            Memory(store=f"sqlite:///{tmp}/persona.db", embedder=embedder or "static") as memory,
        ):
            user = f"persona-{haystack}"
            learned: dict[str, list[str]] = {}
            for sid, session in zip(case["haystack_session_ids"], case["haystack_sessions"], strict=True):
                scope = Scope(user, session_id=sid)
                for i, turn in enumerate(session):
                    if turn["role"] != "user":
                        continue
                    memory.add_message("user", turn["content"], scope=scope)
                    told = memory.learn([{"role": "user", "content": turn["content"]}], scope=scope)
                    learned[turn_id(sid, i)] = [m.content for m in told.memories]
            for q in (q for q in questions if q["haystack"] == haystack):
                unknown = [t for t in q["required"] if t not in turns]
                if unknown:
                    raise InvalidInput(f"persona question {q['id']}: no user turn {unknown} in {haystack}")
                for budget in budgets:
                    context = memory.context(q["question"], budget, scope=Scope(user, session_id="persona-q"))
                    ok = in_context(q["required"], turns, context.text, learned)
                    found[budget].append(ok)
                    filler[budget].append(filler_lines(context.text))
                    tokens[budget].append(context.tokens)
                    per_question.setdefault(q["id"], {})[budget] = ok
        if progress:
            progress(f"persona {haystack}: {len(turns)} user turns")
    result: dict[str, Any] = {"questions": len(questions), "haystacks": len(wanted), "budgets": list(budgets)}
    for b in budgets:
        lines = sum(n for _, n in filler[b])
        result[f"required_in_context@{b}"] = round(sum(found[b]) / len(found[b]), 4)
        result[f"filler_share@{b}"] = round(sum(f for f, _ in filler[b]) / lines, 4) if lines else 0.0
        result[f"context_tokens_mean@{b}"] = round(sum(tokens[b]) / len(tokens[b]), 1)
    result["per_question"] = per_question
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def _raw(path: str | Path) -> list[dict[str, Any]]:
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return list(json.load(handle))


__all__ = ["DEFAULT_BUDGETS", "LABELS", "filler_lines", "in_context", "read_labels", "run", "user_turns"]
