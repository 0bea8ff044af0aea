"""`ScriptedLLM`: a working in-process LLM for tests of code that calls an LLM.

It answers from a script, in order, and records every request::

    llm = ScriptedLLM(['{"facts": []}', ProviderError("down"), lambda messages: "echo"])

A script entry is a string (the reply text), an `LLMResponse` (returned as is), an exception
instance (raised), or a callable that receives the messages and returns either of those.
Token counts of string replies are whitespace word counts, so usage totals are predictable.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..errors import ProviderError
from .base import ChatMessage, LLMResponse, TokenUsage, check_request

Reply = str | LLMResponse | BaseException | Callable[[Sequence[ChatMessage]], str | LLMResponse]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One request `ScriptedLLM` received."""

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float
    json_mode: bool

    @property
    def prompt(self) -> str:
        """All message contents joined, for easy `in` assertions."""
        return "\n".join(m.content for m in self.messages)


class ScriptedLLM:
    """Replies from a script; raises `ProviderError` when the script runs out."""

    __test__ = False

    def __init__(self, responses: Iterable[Reply], *, model: str = "scripted") -> None:
        self.model = model
        self.usage = TokenUsage()
        self.calls: list[ScriptedCall] = []
        self._script: deque[Reply] = deque(responses)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedLLM(model={self.model!r}, remaining={len(self._script)})"

    @property
    def remaining(self) -> int:
        return len(self._script)

    def add(self, *responses: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(responses)

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMResponse:
        check_request(messages, max_tokens, temperature)
        with self._lock:
            self.calls.append(ScriptedCall(tuple(messages), max_tokens, temperature, json_mode))
            entry = self._script.popleft() if self._script else None
        if entry is None:
            self.usage.record_failure()
            raise ProviderError(f"ScriptedLLM script exhausted after {len(self.calls) - 1} call(s)")
        response = self._reply(entry, messages)
        self.usage.record(response)
        return response

    def close(self) -> None:
        """Nothing to release; present because every `LLMClient` has it."""

    def _reply(self, entry: Reply, messages: Sequence[ChatMessage]) -> LLMResponse:
        if isinstance(entry, BaseException):
            self.usage.record_failure()
            raise entry
        value = entry(messages) if callable(entry) else entry
        if isinstance(value, LLMResponse):
            return value
        prompt_words = sum(len(m.content.split()) for m in messages)
        return LLMResponse(value, prompt_words, len(value.split()), self.model, "stop")
