"""HTTP plumbing shared by the LLM adapters: POST JSON with retries, backoff and safe error messages.

Retried: timeouts, connection/transport errors, HTTP 408/409/425/429 and every 5xx (Anthropic's 529
"overloaded" included). The wait is exponential backoff with jitter, or the server's own
`Retry-After` / `retry-after-ms` hint when present (capped at `RetryPolicy.max_delay`).
Error messages name the URL without its query or credentials and never include the API key.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from ..errors import ConfigurationError, InvalidInput, ProviderError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
USER_AGENT = "memstrata"
_SNIPPET = 300


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry. `max_retries=3` means up to 4 attempts."""

    max_retries: int = 3
    backoff: float = 0.5
    max_delay: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise InvalidInput(f"max_retries must be >= 0, got {self.max_retries}")
        if self.backoff < 0 or self.max_delay < 0:
            raise InvalidInput("backoff and max_delay must be >= 0 seconds")


def is_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def backoff_delay(attempt: int, policy: RetryPolicy, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with "equal jitter": between half and all of `backoff * 2**attempt`."""
    ceiling = min(policy.max_delay, policy.backoff * (2**attempt))
    return ceiling / 2 + rand() * ceiling / 2


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The server's wait hint: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return _seconds_until(value, now or datetime.now(UTC))


def _seconds_until(http_date: str, now: datetime) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def next_delay(attempt: int, response: httpx.Response | None, policy: RetryPolicy) -> float:
    hinted = retry_after_seconds(response.headers) if response is not None else None
    if hinted is None:
        return backoff_delay(attempt, policy)
    return min(hinted, policy.max_delay)


def safe_url(url: str | httpx.URL) -> str:
    """The URL without user info, query or fragment: safe to put in messages and logs."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))


def redact(text: str, secrets: Sequence[str | None]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def check_base_url(base_url: str) -> str:
    """Return `base_url` without a trailing slash, or raise `ConfigurationError` if it is not http(s)."""
    try:
        parsed = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        raise ConfigurationError(f"invalid LLM base URL {base_url!r}: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigurationError(f"LLM base URL must be an http(s) URL with a host, got {safe_url(parsed)!r}")
    return base_url.rstrip("/")


def describe_response(response: httpx.Response, secrets: Sequence[str | None]) -> str:
    """'HTTP 503 Service Unavailable: <start of body>' with secrets removed."""
    body = " ".join(response.text[:_SNIPPET].split())
    reason = response.reason_phrase or ""
    return redact(f"HTTP {response.status_code} {reason}: {body}".strip(), secrets)


def _attempt(
    client: httpx.Client, url: str, payload: dict[str, Any], headers: Mapping[str, str]
) -> tuple[httpx.Response | None, str]:
    """One POST. Returns (response, "") or (None, what went wrong) for a transport failure."""
    try:
        return client.post(url, json=payload, headers=dict(headers)), ""
    except httpx.TimeoutException as exc:
        return None, f"timed out after {client.timeout.read}s ({type(exc).__name__})"
    except httpx.TransportError as exc:
        return None, f"{type(exc).__name__}: {exc}"


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    headers: Mapping[str, str],
    policy: RetryPolicy,
    secrets: Sequence[str | None] = (),
) -> httpx.Response:
    """POST `payload`, retrying transient failures; return the first non-retryable response.

    The returned response may still be an error (400, 401, 404...): callers decide what it means.
    Raises `ProviderError` when every attempt failed transiently.
    """
    attempts = policy.max_retries + 1
    problem = ""
    for attempt in range(attempts):
        response, problem = _attempt(client, url, payload, headers)
        if response is not None and not is_retryable(response.status_code):
            return response
        if response is not None:
            problem = describe_response(response, secrets)
        if attempt + 1 < attempts:
            time.sleep(next_delay(attempt, response, policy))
    raise ProviderError(
        f"LLM request to {safe_url(url)} failed after {attempts} attempt(s): {redact(problem, secrets)}"
    )


def response_json(response: httpx.Response, url: str, secrets: Sequence[str | None] = ()) -> dict[str, Any]:
    """The JSON object of a successful response, or `ProviderError` if the body is not one."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        snippet = redact(response.text[:_SNIPPET], secrets)
        raise ProviderError(f"LLM endpoint {safe_url(url)} did not return a JSON object: {snippet!r}")
    return data


def build_client(client: httpx.Client | None, timeout: float) -> tuple[httpx.Client, bool]:
    """Return (client, owned): the caller's client, or a new one we must close."""
    if timeout <= 0:
        raise InvalidInput(f"timeout must be > 0 seconds, got {timeout}")
    if client is not None:
        return client, False
    return httpx.Client(timeout=httpx.Timeout(timeout), headers={"user-agent": USER_AGENT}), True


def usage_block(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage")
    return usage if isinstance(usage, dict) else {}


def as_int(value: object) -> int:
    """A token count from a provider's usage block; 0 when missing or malformed."""
    return value if isinstance(value, int) and value >= 0 else 0
