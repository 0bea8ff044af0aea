"""`memstrata-bench longmemeval`: session and turn retrieval of memstrata on LongMemEval.

Each question is one user holding its own haystack. At `turn` granularity every turn (both roles) is an
episode memory dated with its session's date, its turn id as provenance and the two previous turns of its
session as keyword-indexed context (as `bench locomo` stores LoCoMo); at `session` granularity each
session is one memory. The question is searched as of its own date (`longmemeval_data.visible_until`),
so the search resolves "last week" against the question's time and sees what existed then.
Metrics are the paper's (`longmemeval_data`); abstention questions are left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memstrata import InvalidInput, Memory, MemoryKind, NewMemory, Scope, SearchFilter, Strategy
from memstrata.core.retrieval import context_text
from memstrata.storage.base import MemoryFilter

from .latency import bench_store, open_postgres
from .locomo_data import Conversation
from .longmemeval_data import SEARCH_K, TYPES, Case, fit_text, load, mean_metrics, score_case, visible_until
from .report import latency_summary

GRANULARITIES = ("turn", "session")
Progress = Callable[[str], None]


def user_of(case: Case) -> str:
    return f"lme-{case.question_id}"


def session_scope(number: int) -> str:
    """The session id a turn is stored under: its session's position in the haystack."""
    return f"s{number}"


def turn_items(conversation: Conversation, user_id: str) -> list[NewMemory]:
    """Every turn as an episode of its session (role in metadata, as `Memory.add_message` stores turns),
    dated with its session's date, the previous turns of its session as context."""
    turns = conversation.turns
    items = []
    for position, turn in enumerate(turns):
        previous = [t.document for t in turns[max(0, position - turn.index) : position]]
        items.append(
            NewMemory(
                content=turn.document,
                kind=MemoryKind.EPISODE,
                created_at=turn.at,
                source_ids=(turn.dia_id,),
                metadata={"role": turn.speaker, "session": turn.session, "turn": turn.index},
                context=context_text(previous),
                scope=Scope(user_id, session_id=session_scope(turn.session)),
            )
        )
    return items


def session_items(case: Case) -> list[NewMemory]:
    """Every session as one episode ("role: text" lines), provenance its session id."""
    grouped: dict[int, list[Any]] = {}
    for turn in case.conversation.turns:
        grouped.setdefault(turn.session, []).append(turn)
    items = []
    for turns in grouped.values():
        text = fit_text("\n".join(t.document for t in turns))
        session_id = turns[0].dia_id.rsplit(":", 1)[0]
        items.append(
            NewMemory(
                content=text,
                kind=MemoryKind.EPISODE,
                created_at=turns[0].at,
                source_ids=(session_id,),
                metadata={"session": turns[0].session},
            )
        )
    return items


def ingest(memory: Memory, case: Case, granularity: str) -> Scope:
    scope = Scope(user_id=user_of(case))
    if memory.store.count_memories(scope.user_id, MemoryFilter(include_superseded=True, include_expired=True)):
        memory.store.erase_user(scope.user_id)  # a store given by URL may hold an earlier run
    items = turn_items(case.conversation, scope.user_id) if granularity == "turn" else session_items(case)
    for start in range(0, len(items), 256):
        memory.add_many(items[start : start + 256], scope=scope, dedupe=False)
    return scope


def store_turns(memory: Memory, conversation: Conversation, user_id: str) -> None:
    """Store a haystack's turns for `user_id` (as `ingest` does at turn granularity)."""
    items = turn_items(conversation, user_id)
    for start in range(0, len(items), 256):
        memory.add_many(items[start : start + 256], scope=user_id, dedupe=False)


def search(memory: Memory, case: Case, *, k: int = SEARCH_K, strategy: Strategy = Strategy.HYBRID) -> list[str]:
    """The provenance (turn or session ids) of the top-k hits, best first, searched as of the question's date."""
    hits = memory.search(
        case.question,
        scope=user_of(case),
        k=k,
        strategy=strategy,
        filters=SearchFilter(as_of=visible_until(case.asked_at)),
    )
    return [h.memory.source_ids[0] for h in hits if h.memory.source_ids]


def summarize(cases: Sequence[Case], rows: Sequence[dict[str, float]]) -> dict[str, Any]:
    """`overall` and `by_type` means of per-question metric rows (pure)."""
    by_type = {t: mean_metrics([r for c, r in zip(cases, rows, strict=True) if c.question_type == t]) for t in TYPES}
    return {"overall": mean_metrics(rows), "by_type": {t: m for t, m in by_type.items() if m}}


def run(
    data: str | Path,
    *,
    store: str | None = None,
    embedder: str | None = None,
    strategy: str = Strategy.HYBRID.value,
    granularity: str = "turn",
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    if granularity not in GRANULARITIES:
        raise InvalidInput(f"unknown granularity {granularity!r}; use one of {', '.join(GRANULARITIES)}")
    cases = load(data, limit=limit)
    with (
        bench_store(store) as target,
        Memory(
            store=target.url if target.owner_url is None else open_postgres(target), embedder=embedder or "static"
        ) as memory,
    ):
        started = time.perf_counter()
        for number, case in enumerate(cases, start=1):
            ingest(memory, case, granularity)
            if progress and number % 10 == 0:
                progress(f"ingested {number}/{len(cases)} haystacks")
        ingest_s = time.perf_counter() - started
        rows, latencies = [], []
        for case in cases:
            t = time.perf_counter()
            ranked = search(memory, case, strategy=Strategy.parse(strategy))
            latencies.append((time.perf_counter() - t) * 1000)
            rows.append(score_case(case, ranked, granularity=granularity))
        return {
            "benchmark": "longmemeval",
            "data": Path(data).name,
            "granularity": granularity,
            "strategy": strategy,
            "store": memory.store.url.split("://")[0],
            "embedder": memory.embedder.name,
            "questions": len(cases),
            "memories": sum(len(c.conversation.turns) for c in cases) if granularity == "turn" else None,
            **summarize(cases, rows),
            "ingest_s": round(ingest_s, 2),
            **latency_summary(latencies, "search_ms"),
            "per_question": {c.question_id: r for c, r in zip(cases, rows, strict=True)},
        }
