"""Rate limits of the API (`limits`, moving windows in process memory): per API key and per failing source.

* **Per key**: every request to /v1 or /mcp that carries a bearer token counts against that token
  (`MEMSTRATA_RATE_LIMIT`, default 1200/minute), valid or not.
* **Per failing source**: every 401 (missing, unknown or revoked key) counts against the client address;
  once a source has failed `MEMSTRATA_AUTH_FAILURE_LIMIT` times (default 20/minute) inside the window,
  every /v1 and /mcp request from it gets 429 until the window has room again, so keys cannot be
  guessed at speed.

Both answer **429** `application/problem+json` with `Retry-After` (whole seconds until the window has
room). The counters live in this process: several server processes behind a balancer each count on
their own. The source is the peer's address; behind a reverse proxy it is the client the proxy names
in `X-Forwarded-For` only if the proxy is listed in `MEMSTRATA_TRUSTED_PROXIES` (`proxies.py`), so a
client cannot pick the address its failures count against.
"""

from __future__ import annotations

import hashlib
import math
import time

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput
from .errors import problem

LIMITED_PREFIXES = ("/v1", "/mcp")


def parse_limit(text: str, name: str) -> RateLimitItem:
    try:
        return parse(text)
    except ValueError as exc:
        raise InvalidInput(f"{name}: invalid rate limit {text!r}; write it like '1200/minute' ({exc})") from None


class RateLimiter:
    """The two limits and their counters."""

    def __init__(self, *, per_key: str, per_failing_source: str) -> None:
        self.per_key = parse_limit(per_key, "MEMSTRATA_RATE_LIMIT")
        self.per_failure = parse_limit(per_failing_source, "MEMSTRATA_AUTH_FAILURE_LIMIT")
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    def retry_after(self, item: RateLimitItem, *identifiers: str) -> int:
        reset = self.limiter.get_window_stats(item, *identifiers).reset_time
        return max(1, math.ceil(reset - time.time()))

    def admit(self, source: str, token: str | None) -> tuple[str, int] | None:
        """None to let the request through, else (reason, seconds to wait)."""
        if not self.limiter.test(self.per_failure, "fail", source):
            return "too many failed authentications from this address", self.retry_after(
                self.per_failure, "fail", source
            )
        if token is not None:
            digest = hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]
            if not self.limiter.hit(self.per_key, "key", digest):
                return "rate limit of this API key exceeded", self.retry_after(self.per_key, "key", digest)
        return None

    def failed(self, source: str) -> None:
        self.limiter.hit(self.per_failure, "fail", source)


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(LIMITED_PREFIXES):
            await self.app(scope, receive, send)
            return
        source = (scope.get("client") or ("unknown", 0))[0]
        refused = self.limiter.admit(source, bearer_token(scope))
        if refused is not None:
            reason, wait = refused
            await problem(429, f"{reason}; retry after {wait} s", headers={"Retry-After": str(wait)})(
                scope, receive, send
            )
            return

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self.limiter.failed(source)
            await send(message)

        await self.app(scope, receive, counting_send)


def bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() or None if scheme.lower() == "bearer" else None
    return None
