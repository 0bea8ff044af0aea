"""`MemoryAgent`: the seed's `AgentWithMemory` loop on top of `Memory`.

Each `chat(user_input)`:

1. recalls: `memory.context(scope, user_input, include=LONG_TERM_PARTS)` — profile, relevant memories
   (with dates), entities, procedures, pending items, last topics — into the system prompt;
2. adds the session summary (as a user/assistant pair, as the seed does) and the recent turns;
3. asks the model — an `LLMClient` or any callable taking OpenAI-style message dicts and returning text;
4. saves both turns (episode log + buffer; older turns fold into the summary).

Nothing is saved when the model call fails, so retrying does not duplicate turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from ..conversation_api import ConversationAPI
from ..errors import InvalidInput
from ..llm.base import ChatMessage, LLMClient
from ..models import Scope, validate_text
from .context import LONG_TERM_PARTS, Context

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
        memory: ConversationAPI,
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
        context = self.memory.context(self.scope, user_input, self.memory_tokens, include=LONG_TERM_PARTS)
        self.last_context = context
        system = self.system_prompt
        if context.text:
            system = f"{system}\n\n{context.text}\n\n{CONTEXT_INSTRUCTIONS}"
        messages = [ChatMessage("system", system)]
        summary = self.memory.session_summary(self.scope)
        if summary:
            messages += [
                ChatMessage("user", f"{SUMMARY_PREFIX}\n{summary}"),
                ChatMessage("assistant", SUMMARY_ACK),
            ]
        for turn in self.memory.recent_turns(self.scope):
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
        self.memory.add_messages(self.scope, turns)
        return reply

    def end_session(self, *, background: bool = True) -> dict[str, Any] | Future[dict[str, Any]]:
        """End the session: update the user context object (in the background by default)."""
        return self.memory.end_session(self.scope, background=background)


AgentWithMemory = MemoryAgent
"""The seed's name for it."""

__all__ = ["AgentWithMemory", "ChatFunction", "MemoryAgent"]
