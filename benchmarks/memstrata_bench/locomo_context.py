"""Context-assembly quality on LoCoMo: how much of the evidence `Memory.context()` puts in the prompt.

For every question of an ingested conversation (see `locomo.ingest`: one user per conversation, one
episode per turn) the context is assembled for budgets B (default 500, 1000, 2000 tokens) and

* `context_recall@B` — fraction of the question's evidence turns whose text ("Speaker: text",
  whitespace-normalized) appears verbatim in the assembled context, averaged over questions;
* `context_tokens_mean@B` — mean tokens of the assembled context (never above B);
* `full_context_tokens_mean` — mean tokens of the whole conversation (every turn, one per line),
  i.e. the "stuff everything in the prompt" baseline, counted with the same tokenizer;
* `context_fraction@B` — `context_tokens_mean@B / full_context_tokens_mean`.

`context_tokens_mean` is the value at 1000 tokens (the budget of the project's goal:
context_recall@1000 ≥ 0.6 at ≤ 6 % of the full conversation's tokens).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from memstrata import Scope
from memstrata.core.tokens import TokenCounter, default_counter
from memstrata.layers.context import Context

from .locomo_data import CATEGORIES, Conversation
from .report import latency_summary

DEFAULT_BUDGETS = (500, 1000, 2000)
PRIMARY_BUDGET = 1000
Progress = Callable[[str], None]


class SupportsContext(Protocol):
    def context(
        self, query: str | None = None, max_tokens: int = ..., *, scope: Any, include: Any = None
    ) -> Context: ...


def _flat(text: str) -> str:
    return " ".join(text.split())


def context_recall(evidence: Sequence[str], documents: dict[str, str], context_text: str) -> float:
    """Fraction of the evidence dia_ids whose turn text is inside `context_text` (pure)."""
    if not evidence:
        return 0.0
    flat = _flat(context_text)
    return sum(1 for dia_id in evidence if _flat(documents[dia_id]) in flat) / len(evidence)


def full_context_tokens(conversation: Conversation, counter: TokenCounter) -> int:
    """Tokens of the whole conversation, one turn per line."""
    return counter.count("\n".join(turn.document for turn in conversation.turns))


def evaluate_context(
    memory: SupportsContext,
    conversations: Sequence[Conversation],
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    scopes: Sequence[Scope] | None = None,
    counter: TokenCounter | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Context metrics over the questions of `conversations`, already ingested into `memory`.

    `scopes` defaults to `locomo.ingest`'s (`Scope(user_id="locomo-<sample_id>")`).
    """
    counter = counter or default_counter()
    budgets = sorted(set(budgets))
    scopes = list(scopes) if scopes is not None else [Scope(user_id=f"locomo-{c.sample_id}") for c in conversations]
    recalls: dict[int, list[tuple[str, float]]] = {b: [] for b in budgets}
    tokens: dict[int, list[int]] = {b: [] for b in budgets}
    full: list[int] = []
    latencies: list[float] = []
    for conversation, scope in zip(conversations, scopes, strict=True):
        documents = {turn.dia_id: turn.document for turn in conversation.turns}
        full.append(full_context_tokens(conversation, counter))
        for question in conversation.questions:
            for budget in budgets:
                started = time.perf_counter()
                context = memory.context(question.question, budget, scope=scope)
                latencies.append((time.perf_counter() - started) * 1000)
                tokens[budget].append(context.tokens)
                recalls[budget].append((question.category, context_recall(question.evidence, documents, context.text)))
        if progress:
            progress(f"context for {conversation.sample_id} ({len(conversation.questions)} questions)")
    full_mean = sum(full) / len(full) if full else 0.0
    result: dict[str, Any] = {"budgets": budgets, "questions": len(recalls[budgets[0]]) if budgets else 0}
    for budget in budgets:
        mean_tokens = _mean(tokens[budget])
        result[f"context_recall@{budget}"] = round(_mean([r for _, r in recalls[budget]]), 4)
        result[f"context_tokens_mean@{budget}"] = round(mean_tokens, 1)
        result[f"context_fraction@{budget}"] = round(mean_tokens / full_mean, 4) if full_mean else 0.0
        result[f"context_recall_by_category@{budget}"] = {
            c: round(_mean([r for cat, r in recalls[budget] if cat == c]), 4) for c in CATEGORIES
        }
    primary = PRIMARY_BUDGET if PRIMARY_BUDGET in budgets else budgets[len(budgets) // 2]
    result["context_tokens_mean"] = result[f"context_tokens_mean@{primary}"]
    result["full_context_tokens_mean"] = round(full_mean, 1)
    result.update(latency_summary(latencies, "context_ms"))
    return result


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


__all__ = ["DEFAULT_BUDGETS", "context_recall", "evaluate_context", "full_context_tokens"]
