"""`memstrata-bench locomo`: evidence recall of memstrata's retrieval on LoCoMo conversations.

Each conversation is one user; every turn is an episode memory whose provenance is its dia_id.
Every question of category 1-4 is searched; recall@k is the fraction of the question's evidence
dia_ids found in the provenance of the top-k hits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memstrata import InvalidInput, Memory, MemoryKind, NewMemory, Scope, Strategy
from memstrata.core.retrieval import context_text
from memstrata.extraction.base import Message
from memstrata.storage.base import MemoryFilter

from .latency import bench_store, open_postgres
from .locomo_context import evaluate_context
from .locomo_data import CATEGORIES, Conversation, evidence_recall, load
from .report import latency_summary

DEFAULT_KS = (1, 5, 10, 20)
MODES = ("turns", "extracted", "both")
"""What is stored: every turn as an episode, only memories extracted from the turns, or both."""
Progress = Callable[[str], None]


def ingest(memory: Memory, conversation: Conversation) -> Scope:
    """Store every turn as an episode of its session: its dia_id as provenance, the two previous turns of
    its session as keyword-indexed context (as `Memory.add_message` does for live conversations)."""
    scope = Scope(user_id=f"locomo-{conversation.sample_id}")
    items = []
    for position, turn in enumerate(conversation.turns):
        previous = [t.document for t in conversation.turns[max(0, position - turn.index) : position]]
        items.append(
            NewMemory(
                content=turn.document,
                kind=MemoryKind.EPISODE,
                metadata={
                    "speaker": turn.speaker,
                    "dia_id": turn.dia_id,
                    "session": turn.session,
                    "turn": turn.index,
                    "session_date": turn.session_date,
                },
                source_ids=(turn.dia_id,),
                created_at=turn.at,
                context=context_text(previous),
                scope=Scope(user_id=scope.user_id, session_id=f"s{turn.session}"),
            )
        )
    for start in range(0, len(items), 256):
        memory.add_many(items[start : start + 256], scope=scope, dedupe=False)
    return scope


def ingest_extracted(memory: Memory, conversation: Conversation) -> Scope:
    """Learn from every turn (offline extraction + resolution); provenance is the turn's dia_id."""
    scope = Scope(user_id=f"locomo-{conversation.sample_id}")
    for turn in conversation.turns:
        message = Message("user", turn.text, turn.at, turn.speaker)
        memory.learn([message], scope=scope, known_name=turn.speaker, source_ids=(turn.dia_id,))
    return scope


def run(
    data: str | Path,
    *,
    store: str | None = None,
    embedder: str | None = None,
    strategy: str = Strategy.HYBRID.value,
    ks: Sequence[int] = DEFAULT_KS,
    mode: str = "turns",
    progress: Progress | None = None,
) -> dict[str, Any]:
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    conversations = load(data)
    with bench_store(store) as target:  # a temporary SQLite file, a throwaway Postgres database, or a URL
        backend = target.url if target.owner_url is None else open_postgres(target)
        with Memory(store=backend, embedder=embedder or "static") as memory:
            result = _evaluate(memory, conversations, Strategy.parse(strategy), sorted(ks), mode, progress)
            stored = sum(memory.store.count_memories(f"locomo-{c.sample_id}", MemoryFilter()) for c in conversations)
            weight = memory.settings.context_vector_weight  # what the stored vectors hold (Settings)
            return {**result, "mode": mode, "memories": stored, "context_vector_weight": weight}


def _evaluate(
    memory: Memory,
    conversations: list[Conversation],
    strategy: Strategy,
    ks: list[int],
    mode: str,
    progress: Progress | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    scopes = []
    for conversation in conversations:
        memory.store.erase_user(f"locomo-{conversation.sample_id}")
        if mode in ("turns", "both"):
            ingest(memory, conversation)
        if mode in ("extracted", "both"):
            ingest_extracted(memory, conversation)
        scopes.append(Scope(user_id=f"locomo-{conversation.sample_id}"))
        if progress:
            progress(f"ingested {conversation.sample_id} ({len(conversation.turns)} turns)")
    ingest_s = time.perf_counter() - started
    per_question: list[tuple[str, dict[int, float]]] = []
    latencies: list[float] = []
    for conversation, scope in zip(conversations, scopes, strict=True):
        for question in conversation.questions:
            t = time.perf_counter()
            hits = memory.search(question.question, scope=scope, k=max(ks), strategy=strategy)
            latencies.append((time.perf_counter() - t) * 1000)
            provenance = [h.memory.source_ids for h in hits]
            per_question.append((question.category, {k: evidence_recall(question.evidence, provenance, k) for k in ks}))
        if progress:
            progress(f"searched {conversation.sample_id} ({len(conversation.questions)} questions)")
    context = evaluate_context(memory, conversations, scopes=scopes) if mode != "extracted" else {}
    if progress and context:
        progress("assembled contexts at 500/1000/2000 tokens")
    return {
        **context,
        "benchmark": "locomo",
        "strategy": strategy.value,
        "store": memory.store.url.split("://")[0],
        "embedder": memory.embedder.name,
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": len(per_question),
        "overall": _mean_recalls([r for _, r in per_question], ks),
        "by_category": {c: _mean_recalls([r for cat, r in per_question if cat == c], ks) for c in CATEGORIES},
        "ingest_s": round(ingest_s, 2),
        **latency_summary(latencies, "search_ms"),
    }


def _mean_recalls(rows: list[dict[int, float]], ks: list[int]) -> dict[str, float]:
    if not rows:
        return {f"recall@{k}": 0.0 for k in ks}
    return {f"recall@{k}": round(sum(r[k] for r in rows) / len(rows), 4) for k in ks}
