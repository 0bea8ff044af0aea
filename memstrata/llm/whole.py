"""Whole answers only: a completion cut off at its token limit is asked again once, then refused.

Every answer memstrata stores or acts on (a rolling summary, a compressed memory, extracted facts,
a reconciliation decision, the user context) comes through `complete_whole`. A truncated answer
(`LLMResponse.truncated`: the provider stopped at `max_tokens`) is only the beginning of what the
model meant to say, and a beginning often reads as complete: a summary missing its last sentences,
a fact list missing its last facts. So it is never used. The request is sent once more with a
larger budget (`reask_budget`: twice the tokens, at most `MAX_REASK_TOKENS`); when that answer is
cut off too, or the budget cannot grow, `TruncatedAnswer` is raised. An answer the provider
withheld (`LLMResponse.refused`: a content filter, a refusal) is `LLMOutputError` at once: asking
again with more room does not change it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..errors import LLMOutputError, TruncatedAnswer
from .base import ChatMessage, LLMClient, LLMResponse

log = logging.getLogger(__name__)

REASK_FACTOR = 2
"""A truncated answer is asked again with this many times its token budget..."""
MAX_REASK_TOKENS = 8192
"""...but never more than this many tokens: one re-ask, bounded, so a model that rambles costs at
most one extra call of bounded size."""


def reask_budget(max_tokens: int) -> int | None:
    """The token budget of the one re-ask after an answer cut off at `max_tokens` (pure), or None
    when it cannot be larger than `max_tokens` (already at `MAX_REASK_TOKENS`)."""
    budget = min(max_tokens * REASK_FACTOR, MAX_REASK_TOKENS)
    return budget if budget > max_tokens else None


def _start(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")


def complete_whole(
    llm: LLMClient,
    messages: Sequence[ChatMessage],
    *,
    max_tokens: int = 1024,
    temperature: float = 0.0,
    json_mode: bool = False,
) -> LLMResponse:
    """`llm.complete(...)`, returning only an answer that was not cut off or withheld.

    Raises `TruncatedAnswer` when the answer stopped at the token limit both times (or could not be
    asked again with more), `LLMOutputError` when the provider withheld it, and whatever
    `complete` raises (`ProviderError`).
    """
    response = llm.complete(messages, max_tokens=max_tokens, temperature=temperature, json_mode=json_mode)
    budgets = [max_tokens]
    if response.truncated and (budget := reask_budget(max_tokens)) is not None:
        log.info("LLM answer cut off at %d tokens; asking again with %d", max_tokens, budget)
        budgets.append(budget)
        response = llm.complete(messages, max_tokens=budget, temperature=temperature, json_mode=json_mode)
    if response.truncated:
        tried = " and then ".join(str(b) for b in budgets)
        raise TruncatedAnswer(
            f"the LLM's answer was cut off at its token limit ({tried} tokens); a partial answer is not "
            f"used (it began {_start(response.text)})"
        )
    if response.refused:
        raise LLMOutputError(f"the LLM provider withheld the answer (finish reason {response.finish_reason!r})")
    return response


__all__ = ["MAX_REASK_TOKENS", "REASK_FACTOR", "complete_whole", "reask_budget"]
