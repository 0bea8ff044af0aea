"""One adapter for every OpenAI-compatible `/v1/chat/completions` server.

OpenAI, Ollama, vLLM, LM Studio and the llama.cpp server all speak this protocol.
`base_url` is the API root including its version (``https://api.openai.com/v1``,
``http://127.0.0.1:11434/v1``); the adapter posts to ``{base_url}/chat/completions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

import httpx

from ..errors import ProviderError
from . import _http
from .base import ChatMessage, LLMResponse, TokenUsage, check_request

_FINISH_REASONS = {"stop": "stop", "length": "length", "eos": "stop", "content_filter": "refusal"}


class OpenAICompatibleLLM:
    """Chat completions over HTTP with retries, timeouts and token accounting.

    `json_mode` sends ``response_format: {"type": "json_object"}``. A server that rejects that
    field (HTTP 400 naming ``response_format``) is asked again without it, and the adapter
    stops sending it; prompts ask for JSON anyway and `memstrata.prompts.parse` validates it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_delay: float = 60.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = _http.check_base_url(base_url)
        self.model = model
        self.url = f"{self.base_url}/chat/completions"
        self.usage = TokenUsage()
        self._api_key = api_key
        self._policy = _http.RetryPolicy(max_retries=max_retries, backoff=backoff, max_delay=max_delay)
        self._client, self._owns_client = _http.build_client(http_client, timeout)
        self._send_response_format = True

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={_http.safe_url(self.base_url)!r}, model={self.model!r})"

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> LLMResponse:
        check_request(messages, max_tokens, temperature)
        payload = self._payload(messages, max_tokens, temperature, json_mode)
        try:
            response = self._post(payload)
            if self._rejects_response_format(response, payload):
                self._send_response_format = False
                payload.pop("response_format")
                response = self._post(payload)
            result = self._parse(response)
        except ProviderError:
            self.usage.record_failure()
            raise
        self.usage.record(result)
        return result

    def _payload(
        self, messages: Sequence[ChatMessage], max_tokens: int, temperature: float, json_mode: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": False,
        }
        if json_mode and self._send_response_format:
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        return _http.post_json(
            self._client,
            self.url,
            payload,
            headers=self._headers(),
            policy=self._policy,
            secrets=[self._api_key],
        )

    @staticmethod
    def _rejects_response_format(response: httpx.Response, payload: dict[str, Any]) -> bool:
        return (
            response.status_code in (400, 422) and "response_format" in payload and "response_format" in response.text
        )

    def _parse(self, response: httpx.Response) -> LLMResponse:
        if response.is_error:
            raise ProviderError(self._failure(response))
        data = _http.response_json(response, self.url, [self._api_key])
        choice = _first_choice(data, self.url)
        usage = _http.usage_block(data)
        reason = choice.get("finish_reason")
        return LLMResponse(
            text=_message_text(choice),
            input_tokens=_http.as_int(usage.get("prompt_tokens")),
            output_tokens=_http.as_int(usage.get("completion_tokens")),
            model=str(data.get("model") or self.model),
            finish_reason=_FINISH_REASONS.get(reason, reason) if isinstance(reason, str) else None,
        )

    def _failure(self, response: httpx.Response) -> str:
        detail = _http.describe_response(response, [self._api_key])
        hint = ""
        if response.status_code == 404:
            hint = f" (is {self.model!r} served there? does the base URL end with the API version, e.g. /v1?)"
        elif response.status_code in (401, 403):
            hint = " (check the API key: MEMSTRATA_LLM_API_KEY or OPENAI_API_KEY)"
        return f"LLM request to {_http.safe_url(self.url)} failed: {detail}{hint}"

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _first_choice(data: dict[str, Any], url: str) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(f"LLM endpoint {_http.safe_url(url)} returned no choices: {str(data)[:200]!r}")
    return choices[0]


def _message_text(choice: dict[str, Any]) -> str:
    """The assistant text; a string, or a list of text parts as some servers send."""
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else choice.get("text")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""
