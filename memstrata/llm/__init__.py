"""The optional LLM layer: a small client protocol, HTTP adapters, a scripted fake, a spec resolver."""

from .anthropic import AnthropicLLM
from .base import ChatMessage, LLMClient, LLMResponse, TokenUsage, UsageTotals
from .openai_compat import OpenAICompatibleLLM
from .registry import resolve_llm
from .scripted import ScriptedCall, ScriptedLLM

__all__ = [
    "AnthropicLLM",
    "ChatMessage",
    "LLMClient",
    "LLMResponse",
    "OpenAICompatibleLLM",
    "ScriptedCall",
    "ScriptedLLM",
    "TokenUsage",
    "UsageTotals",
    "resolve_llm",
]
