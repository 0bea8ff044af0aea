"""Adapter for the Anthropic Messages API (``POST {base_url}/v1/messages``).

System messages become the top-level ``system`` field; consecutive messages of the same role are
merged (the API expects alternating turns); the reply's text content blocks are joined, other
blocks (thinking, tool use) are ignored. The API has no JSON mode: `json_mode` adds an instruction
to the system prompt, and `memstrata.prompts.parse` validates what comes back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any

import httpx

from ..errors import ConfigurationError, InvalidInput, ProviderError
from . import _http
from .base import ChatMessage, LLMResponse, TokenUsage, check_request

ANTHROPIC_VERSION = "2023-06-01"
JSON_INSTRUCTION = "Respond with a single valid JSON value and nothing else: no prose, no code fences."
_FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "refusal"}


class AnthropicLLM:
    """Claude models through the Messages API, with retries, timeouts and token accounting."""

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = "https://api.anthropic.com",
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_delay: float = 60.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        if not api_key:
            raise ConfigurationError("AnthropicLLM needs an API key (set ANTHROPIC_API_KEY)")
        self.model = model
        self.base_url = _http.check_base_url(base_url)
        self.url = f"{self.base_url}/v1/messages"
        self.usage = TokenUsage()
        self._api_key = api_key
        self._policy = _http.RetryPolicy(max_retries=max_retries, backoff=backoff, max_delay=max_delay)
        self._client, self._owns_client = _http.build_client(http_client, timeout)

    def __repr__(self) -> str:
        return f"AnthropicLLM(model={self.model!r}, base_url={_http.safe_url(self.base_url)!r})"

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMResponse:
        check_request(messages, max_tokens, temperature)
        payload = build_payload(self.model, messages, max_tokens, temperature, json_mode)
        headers = {
            "content-type": "application/json",
            "x-api-key": self._api_key,
            "anthropic-version": ANTHROPIC_VERSION,
        }
        try:
            response = _http.post_json(
                self._client, self.url, payload, headers=headers, policy=self._policy, secrets=[self._api_key]
            )
            result = self._parse(response)
        except ProviderError:
            self.usage.record_failure()
            raise
        self.usage.record(result)
        return result

    def _parse(self, response: httpx.Response) -> LLMResponse:
        if response.is_error:
            detail = _http.describe_response(response, [self._api_key])
            raise ProviderError(f"LLM request to {_http.safe_url(self.url)} failed: {detail}")
        data = _http.response_json(response, self.url, [self._api_key])
        usage = _http.usage_block(data)
        reason = data.get("stop_reason")
        return LLMResponse(
            text=_text_blocks(data, self.url),
            input_tokens=_http.as_int(usage.get("input_tokens")),
            output_tokens=_http.as_int(usage.get("output_tokens")),
            model=str(data.get("model") or self.model),
            finish_reason=_FINISH_REASONS.get(reason, reason) if isinstance(reason, str) else None,
        )

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> AnthropicLLM:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def build_payload(
    model: str, messages: Sequence[ChatMessage], max_tokens: int, temperature: float, json_mode: bool
) -> dict[str, Any]:
    """The Messages API request body for `messages` (pure). Temperature is capped at 1, the API's maximum."""
    system = [m.content for m in messages if m.role == "system"]
    if json_mode:
        system.append(JSON_INSTRUCTION)
    turns = merge_turns(m for m in messages if m.role != "system")
    if not turns:
        raise InvalidInput("the Messages API needs at least one user or assistant message")
    payload: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": min(temperature, 1.0),
        "messages": turns,
    }
    if system:
        payload["system"] = "\n\n".join(system)
    return payload


def merge_turns(messages: Iterable[ChatMessage]) -> list[dict[str, Any]]:
    """User/assistant turns as content-block messages, consecutive same-role turns merged."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        block = {"type": "text", "text": message.content}
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": message.role, "content": [block]})
    return turns


def _text_blocks(data: dict[str, Any], url: str) -> str:
    content = data.get("content")
    if not isinstance(content, list):
        raise ProviderError(f"LLM endpoint {_http.safe_url(url)} returned no content blocks: {str(data)[:200]!r}")
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
