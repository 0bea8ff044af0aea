"""`MemoryAgent`: a chat loop with memory (`AgentWithMemory`) on top of `Memory`.

Each `chat(user_input)`:

1. recalls: `memory.context(user_input, scope=scope, include=LONG_TERM_PARTS)` — profile, relevant memories
   (with dates), entities, procedures, pending items, last topics — into the system prompt;
2. adds the session summary (as a user/assistant pair, so any chat model accepts it) and the recent turns;
3. asks the model — an `LLMClient` or any callable taking OpenAI-style message dicts and returning text;
4. saves both turns (episode log + buffer; older turns fold into the summary).

Nothing is saved when the model call fails, so retrying does not duplicate turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..layers.context import LONG_TERM_PARTS, Context
from ..llm.base import ChatMessage, LLMClient
from ..models import Scope, validate_text

if TYPE_CHECKING:
    from ..memory import Memory

ChatFunction = Callable[[list[dict[str, str]]], str]
"""A plain model function: `[{"role": ..., "content": ...}, ...] -> reply text`."""

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
CONTEXT_INSTRUCTIONS = (
    "Use this context naturally in your responses. Do not mention that you have a memory system. "
    "Just use the information as a knowledgeable assistant would."
)
SUMMARY_PREFIX = "[Summary of our conversation so far]"
SUMMARY_ACK = "Understood."


class MemoryAgent:
    """A chat loop with memory for one user session (`scope` must name a session)."""

    def __init__(
        self,
        memory: Memory,
        *,
        scope: Scope,
        llm: LLMClient | ChatFunction,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        memory_tokens: int = 1000,
        max_tokens: int = 1024,
        temperature: float = 0.0,
    ) -> None:
        scope.require_session()
        if not isinstance(llm, LLMClient) and not callable(llm):
            raise InvalidInput("llm must be an LLMClient or a callable taking a list of message dicts")
        self.memory = memory
        self.scope = scope
        self.llm = llm
        self.system_prompt = system_prompt
        self.memory_tokens = memory_tokens
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.last_context: Context | None = None

    def build_messages(self, user_input: str) -> list[ChatMessage]:
        """The prompt for one turn: system (+ recalled context), summary pair, recent turns, the input."""
        user_input = validate_text(user_input, "user_input")
        context = self.memory.context(user_input, self.memory_tokens, include=LONG_TERM_PARTS, scope=self.scope)
        self.last_context = context
        system = self.system_prompt
        if context.text:
            system = f"{system}\n\n{context.text}\n\n{CONTEXT_INSTRUCTIONS}"
        messages = [ChatMessage("system", system)]
        summary = self.memory.session_summary(scope=self.scope)
        if summary:
            messages += [
                ChatMessage("user", f"{SUMMARY_PREFIX}\n{summary}"),
                ChatMessage("assistant", SUMMARY_ACK),
            ]
        for turn in self.memory.recent_turns(scope=self.scope):
            role = turn.role if turn.role in ("user", "assistant") else "user"
            messages.append(ChatMessage(role, turn.content))  # type: ignore[arg-type]
        messages.append(ChatMessage("user", user_input))
        return messages

    def _complete(self, messages: Sequence[ChatMessage]) -> str:
        if isinstance(self.llm, LLMClient):
            return self.llm.complete(messages, max_tokens=self.max_tokens, temperature=self.temperature).text
        reply = self.llm([{"role": m.role, "content": m.content} for m in messages])
        if not isinstance(reply, str):
            raise InvalidInput(f"the llm callable must return a string, got {type(reply).__name__}")
        return reply

    def chat(self, user_input: str) -> str:
        """One turn: recall, ask the model, save both turns; returns the reply."""
        messages = self.build_messages(user_input)
        reply = self._complete(messages)
        turns = [("user", messages[-1].content)] + ([("assistant", reply)] if reply.strip() else [])
        self.memory.add_messages(turns, scope=self.scope)
        return reply

    def end_session(self, *, background: bool = True) -> dict[str, Any] | Future[dict[str, Any]]:
        """End the session: update the user context object (in the background by default)."""
        return self.memory.end_session(background=background, scope=self.scope)


AgentWithMemory = MemoryAgent
"""The name this loop is commonly known by."""

__all__ = ["AgentWithMemory", "ChatFunction", "MemoryAgent"]
