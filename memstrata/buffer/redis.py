"""`RedisBuffer`: session buffers in Redis (`MEMSTRATA_BUFFER=redis://host:6379/0`).

One list per session at `{prefix}user:{<user_id>}:session:<session_id>`, one JSON turn per entry.
Every write is one MULTI/EXEC (or one Lua script): append + LTRIM to `max_turns` + PEXPIRE (the idle
TTL is refreshed on every write). Data survives an application restart, and a Redis restart when the
server persists (RDB/AOF). Any Redis failure raises `BufferUnavailable` naming the URL without its
password; nothing is dropped silently.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from ..errors import BufferUnavailable, ConfigurationError, InvalidInput
from ..models import Scope, validate_id
from .base import (
    DEFAULT_TTL_SECONDS,
    AppendResult,
    Turn,
    batched,
    check_max_turns,
    check_ttl,
    fold_lock_key,
    session_key,
    user_key_prefix,
)

try:
    import redis
    from redis.backoff import ExponentialBackoff
    from redis.retry import Retry
except ImportError:  # pragma: no cover - exercised only without the extra
    redis = None  # type: ignore[assignment]

FOLD_LOCK_SECONDS = 60.0
"""A fold lock left by a crashed process frees itself after this long."""

_GLOB_SPECIALS = re.compile(r"([*?\[\]\\])")
_PREFIX = re.compile(r"^[A-Za-z0-9_.:@+\-/]*$")

_TRIM_THROUGH = """
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for i, raw in ipairs(items) do
  local ok, turn = pcall(cjson.decode, raw)
  if ok and type(turn) == 'table' and turn['id'] == ARGV[1] then
    redis.call('LTRIM', KEYS[1], i, -1)
    if tonumber(ARGV[2]) > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
    end
    return i
  end
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def redact_url(url: str) -> str:
    """The URL with its password (if any) replaced by `***`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise InvalidInput(
            f"invalid buffer key prefix {prefix!r}: use letters, digits and _.:@+-/ (no braces: "
            "the user id is the only Redis Cluster hash tag)"
        )
    return prefix


class RedisBuffer:
    """Session buffers in one Redis database."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
        prefix: str = "",
        timeout: float = 2.0,
        client: Any = None,
    ) -> None:
        """`client` may be an existing `redis.Redis` (decode_responses=True); otherwise one is built
        from `url` with `timeout` seconds for connecting and for each command, and two quick retries."""
        if redis is None:
            raise ConfigurationError("the Redis buffer needs the redis package: pip install 'memstrata[redis]'")
        self.url = redact_url(url)
        self.ttl_seconds = check_ttl(ttl_seconds)
        self.prefix = check_prefix(prefix)
        if client is None:
            try:
                client = redis.Redis.from_url(
                    url, decode_responses=True, socket_connect_timeout=timeout, socket_timeout=timeout,
                    retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2),
                )  # fmt: skip
            except (ValueError, TypeError) as exc:
                raise ConfigurationError(f"invalid Redis URL {self.url}: {exc}") from None
        self._redis = client
        self._trim_through = self._redis.register_script(_TRIM_THROUGH)
        self._release = self._redis.register_script(_RELEASE)

    def __repr__(self) -> str:
        return f"RedisBuffer({self.url!r}, ttl_seconds={self.ttl_seconds}, prefix={self.prefix!r})"

    @property
    def _ttl_ms(self) -> int:
        return 0 if self.ttl_seconds is None else max(1, round(self.ttl_seconds * 1000))

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except redis.exceptions.ConnectionError as exc:
            raise BufferUnavailable(f"Redis buffer at {self.url} is unavailable ({action}): {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise BufferUnavailable(f"Redis buffer at {self.url} failed ({action}): {exc}") from exc

    def key(self, scope: Scope) -> str:
        return session_key(self.prefix, scope)

    def ping(self) -> None:
        """Raise `BufferUnavailable` unless Redis answers."""
        with self._errors("ping"):
            self._redis.ping()

    def append(self, scope: Scope, turns: Sequence[Turn], *, max_turns: int) -> AppendResult:
        check_max_turns(max_turns)
        key = self.key(scope)
        with self._errors("append"):
            pipe = self._redis.pipeline(transaction=True)
            pipe.exists(key)
            if turns:
                pipe.rpush(key, *[t.to_json() for t in turns])
            pipe.ltrim(key, -max_turns, -1)
            if self._ttl_ms:
                pipe.pexpire(key, self._ttl_ms)
            pipe.lrange(key, 0, -1)
            results = pipe.execute()
        return AppendResult([Turn.from_json(raw) for raw in results[-1]], bool(results[0]))

    def window(self, scope: Scope) -> list[Turn] | None:
        with self._errors("read"):
            raw = cast(list[str], self._redis.lrange(self.key(scope), 0, -1))
        return [Turn.from_json(r) for r in raw] if raw else None

    def replace(self, scope: Scope, turns: Sequence[Turn]) -> None:
        key = self.key(scope)
        with self._errors("replace"):
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(key)
            if turns:
                pipe.rpush(key, *[t.to_json() for t in turns])
                if self._ttl_ms:
                    pipe.pexpire(key, self._ttl_ms)
            pipe.execute()

    def trim_through(self, scope: Scope, turn_id: str) -> int:
        with self._errors("trim"):
            return int(self._trim_through(keys=[self.key(scope)], args=[turn_id, self._ttl_ms]))

    @contextmanager
    def fold_lock(self, scope: Scope) -> Iterator[bool]:
        key = fold_lock_key(self.prefix, scope)
        token = secrets.token_hex(8)
        with self._errors("lock"):
            acquired = bool(self._redis.set(key, token, nx=True, px=round(FOLD_LOCK_SECONDS * 1000)))
        try:
            yield acquired
        finally:
            if acquired:
                with self._errors("unlock"):
                    self._release(keys=[key], args=[token])

    def clear_session(self, scope: Scope) -> bool:
        with self._errors("clear session"):
            return bool(self._redis.delete(self.key(scope)))

    def clear_user(self, user_id: str) -> int:
        """UNLINK every `{prefix}user:{<user_id>}:*` key (found by SCAN, never KEYS)."""
        pattern = _GLOB_SPECIALS.sub(r"\\\1", user_key_prefix(self.prefix, validate_id(user_id, "user_id"))) + "*"
        removed = 0
        with self._errors("clear user"):
            keys = list(dict.fromkeys(self._redis.scan_iter(match=pattern, count=500)))
            for chunk in batched(keys, 500):
                removed += int(self._redis.unlink(*chunk))
        return removed

    def close(self) -> None:
        self._redis.close()
