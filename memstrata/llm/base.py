"""The LLM contract: chat messages in, text out, with token accounting.

The LLM is optional in memstrata. Callers (extraction, summaries, consolidation,
the user context) depend on the `LLMClient` protocol only; adapters speak
OpenAI-compatible chat completions or the Anthropic Messages API, and
`ScriptedLLM` is a working in-process fake for tests.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ..errors import InvalidInput

ChatRole = Literal["system", "user", "assistant"]
CHAT_ROLES: tuple[ChatRole, ...] = ("system", "user", "assistant")


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a chat prompt."""

    role: ChatRole
    content: str

    def __post_init__(self) -> None:
        if self.role not in CHAT_ROLES:
            raise InvalidInput(f"unknown chat role {self.role!r}; known: {', '.join(CHAT_ROLES)}")
        if not isinstance(self.content, str):
            raise InvalidInput(f"chat message content must be a string, got {type(self.content).__name__}")


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """The text of one completion, why it stopped and what it cost.

    `finish_reason` is the provider's reason for stopping, normalized: "stop" (the answer is
    complete), "length" (cut off at `max_tokens`: OpenAI-compatible `finish_reason: "length"`,
    Anthropic `stop_reason: "max_tokens"`), "refusal" (the provider withheld the answer: OpenAI's
    "content_filter", Anthropic's "refusal"), or the provider's own value; None when it sent none.
    Callers that store an answer get it through `memstrata.llm.whole.complete_whole`, which never
    returns a cut-off or withheld one.
    """

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """The answer was cut off at the token limit: what came back is only its beginning."""
        return self.finish_reason == "length"

    @property
    def refused(self) -> bool:
        """The provider stopped or withheld the answer (a content filter, a refusal)."""
        return self.finish_reason == "refusal"


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A consistent snapshot of a `TokenUsage`."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def cost(self, *, input_per_million: float, output_per_million: float) -> float:
        """Price of these tokens at the given prices per million tokens (in any currency)."""
        return (self.input_tokens * input_per_million + self.output_tokens * output_per_million) / 1_000_000


class TokenUsage:
    """Thread-safe running totals of one client's calls, failures and tokens."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = UsageTotals()

    def record(self, response: LLMResponse) -> None:
        with self._lock:
            t = self._totals
            self._totals = UsageTotals(
                calls=t.calls + 1,
                failures=t.failures,
                input_tokens=t.input_tokens + response.input_tokens,
                output_tokens=t.output_tokens + response.output_tokens,
            )

    def record_failure(self) -> None:
        with self._lock:
            t = self._totals
            self._totals = UsageTotals(t.calls, t.failures + 1, t.input_tokens, t.output_tokens)

    def snapshot(self) -> UsageTotals:
        with self._lock:
            return self._totals

    @property
    def calls(self) -> int:
        return self.snapshot().calls

    @property
    def input_tokens(self) -> int:
        return self.snapshot().input_tokens

    @property
    def output_tokens(self) -> int:
        return self.snapshot().output_tokens

    def __repr__(self) -> str:
        t = self.snapshot()
        return f"TokenUsage(calls={t.calls}, failures={t.failures}, in={t.input_tokens}, out={t.output_tokens})"


@runtime_checkable
class LLMClient(Protocol):
    """Anything that completes a chat.

    Implementations raise `ProviderError` when the endpoint fails (after their own retries)
    and keep running totals in a `usage: TokenUsage` attribute. They never parse JSON:
    `json_mode` only asks the provider for JSON; `memstrata.prompts.parse` validates it.
    """

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMResponse: ...

    def close(self) -> None:
        """Release connections; the client is not used afterwards."""
        ...


def check_request(messages: Sequence[ChatMessage], max_tokens: int, temperature: float) -> None:
    """Reject requests no provider would accept, before any network call."""
    if not messages:
        raise InvalidInput("an LLM request needs at least one message")
    if not all(isinstance(m, ChatMessage) for m in messages):
        raise InvalidInput("LLM messages must be ChatMessage instances")
    if max_tokens < 1:
        raise InvalidInput(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0.0 <= temperature <= 2.0:
        raise InvalidInput(f"temperature must be between 0 and 2, got {temperature}")


__all__ = [
    "CHAT_ROLES",
    "ChatMessage",
    "ChatRole",
    "LLMClient",
    "LLMResponse",
    "TokenUsage",
    "UsageTotals",
    "check_request",
]
