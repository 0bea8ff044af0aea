"""Resolve an LLM spec string ("openai:gpt-4o-mini", "ollama:llama3.2", "anthropic:claude-…").

Specs are resolved at the edges (settings, CLI, server start), never at import. Environment
variables are read when `resolve_llm` is called:

* ``openai:MODEL`` — base URL ``MEMSTRATA_LLM_BASE_URL``, else https://api.openai.com/v1; key
  ``MEMSTRATA_LLM_API_KEY``, else ``OPENAI_API_KEY`` (required only for api.openai.com).
* ``ollama:MODEL`` — base URL ``MEMSTRATA_LLM_BASE_URL``, else http://127.0.0.1:11434/v1; key
  ``MEMSTRATA_LLM_API_KEY`` (optional).
* ``anthropic:MODEL`` — base URL ``MEMSTRATA_LLM_BASE_URL``, else https://api.anthropic.com; key
  ``MEMSTRATA_LLM_API_KEY``, else ``ANTHROPIC_API_KEY`` (required).

`MEMSTRATA_LLM_TIMEOUT` (seconds) and `MEMSTRATA_LLM_MAX_RETRIES` tune every adapter.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigurationError
from .anthropic import AnthropicLLM
from .base import LLMClient
from .openai_compat import OpenAICompatibleLLM

OPENAI_BASE_URL = "https://api.openai.com/v1"
OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DISABLED = frozenset({"", "none", "off", "false", "0"})

Factory = Callable[[str, Mapping[str, str]], LLMClient]


def _first(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number, got {raw!r}") from None


def _tuning(env: Mapping[str, str]) -> dict[str, Any]:
    return {
        "timeout": _number(env, "MEMSTRATA_LLM_TIMEOUT", 60.0),
        "max_retries": int(_number(env, "MEMSTRATA_LLM_MAX_RETRIES", 3)),
    }


def _openai(model: str, env: Mapping[str, str]) -> LLMClient:
    base_url = _first(env, "MEMSTRATA_LLM_BASE_URL") or OPENAI_BASE_URL
    api_key = _first(env, "MEMSTRATA_LLM_API_KEY", "OPENAI_API_KEY")
    if api_key is None and base_url.rstrip("/") == OPENAI_BASE_URL:
        raise ConfigurationError(
            f"openai:{model} needs an API key: set OPENAI_API_KEY (or MEMSTRATA_LLM_API_KEY), "
            "or point MEMSTRATA_LLM_BASE_URL at a local OpenAI-compatible server"
        )
    return OpenAICompatibleLLM(base_url, model, api_key, **_tuning(env))


def _ollama(model: str, env: Mapping[str, str]) -> LLMClient:
    base_url = _first(env, "MEMSTRATA_LLM_BASE_URL") or OLLAMA_BASE_URL
    return OpenAICompatibleLLM(base_url, model, _first(env, "MEMSTRATA_LLM_API_KEY"), **_tuning(env))


def _anthropic(model: str, env: Mapping[str, str]) -> LLMClient:
    api_key = _first(env, "MEMSTRATA_LLM_API_KEY", "ANTHROPIC_API_KEY")
    if api_key is None:
        raise ConfigurationError(f"anthropic:{model} needs an API key: set ANTHROPIC_API_KEY")
    base_url = _first(env, "MEMSTRATA_LLM_BASE_URL") or ANTHROPIC_BASE_URL
    return AnthropicLLM(model, api_key, base_url, **_tuning(env))


FACTORIES: dict[str, Factory] = {"openai": _openai, "ollama": _ollama, "anthropic": _anthropic}


def resolve_llm(spec: str | None, *, env: Mapping[str, str] | None = None) -> LLMClient | None:
    """Build the client a spec names; None (or "none"/"off") means no LLM.

    `env` defaults to `os.environ`, read now. Raises `ConfigurationError` for an unknown
    prefix, a missing model name or a missing required API key.
    """
    if spec is None or spec.strip().lower() in DISABLED:
        return None
    prefix, sep, model = spec.strip().partition(":")
    factory = FACTORIES.get(prefix.lower())
    if factory is None:
        known = ", ".join(f"{name}:MODEL" for name in FACTORIES)
        raise ConfigurationError(f"unknown LLM spec {spec!r}; use one of {known}")
    if not sep or not model.strip():
        raise ConfigurationError(f"LLM spec {spec!r} names no model; write {prefix}:MODEL")
    return factory(model.strip(), os.environ if env is None else env)
