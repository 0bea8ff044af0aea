"""The optional LLM layer: a small client protocol, HTTP adapters, a scripted fake, a spec resolver."""

from .anthropic import AnthropicLLM
from .base import ChatMessage, LLMClient, LLMResponse, TokenUsage, UsageTotals
from .openai_compat import OpenAICompatibleLLM
from .registry import resolve_llm
from .scripted import ScriptedCall, ScriptedLLM
from .whole import MAX_REASK_TOKENS, complete_whole, reask_budget

__all__ = [
    "MAX_REASK_TOKENS",
    "AnthropicLLM",
    "ChatMessage",
    "LLMClient",
    "LLMResponse",
    "OpenAICompatibleLLM",
    "ScriptedCall",
    "ScriptedLLM",
    "TokenUsage",
    "UsageTotals",
    "complete_whole",
    "reask_budget",
    "resolve_llm",
]
