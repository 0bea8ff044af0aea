"""Session buffers: the last turns of each session (in-process or Redis), and `open_buffer`.

Buffer specs (`MEMSTRATA_BUFFER`)::

    memory://                                   in this process (default)
    redis://[:password@]host:6379/0             Redis (also rediss:// and unix://)
    redis+cluster://[:password@]host:7000       Redis Cluster, through any one node (also rediss+cluster://)

Options in the query string: `ttl=SECONDS` (idle expiry, default 3600; 0 = none), `prefix=KEYPREFIX`
(Redis only, default none), `wait_replicas=N` and `wait_timeout_ms=MS` (Redis only: a write is
acknowledged only once N replicas hold it, see `memstrata.buffer.redis`), and `fallback=episodes`: when
Redis fails, the conversation layer logs a warning and serves recent turns from the episode log
instead of raising `BufferUnavailable`.
Other query parameters are passed to redis-py (e.g. `socket_timeout=1`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import ConfigurationError
from ..models import utcnow
from .base import DEFAULT_TTL_SECONDS, AppendResult, Buffer, Turn
from .inprocess import InProcessBuffer

_OURS = ("ttl", "prefix", "fallback", "wait_replicas", "wait_timeout_ms")
_REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")
FALLBACKS = ("episodes",)


def _split(spec: str) -> tuple[str, dict[str, str]]:
    """The spec without our options, and our options."""
    parts = urlsplit(spec)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in _OURS}
    rest = urlencode([(k, v) for k, v in query if k not in _OURS])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), ours


def _ttl(options: dict[str, str], default: float | None) -> float | None:
    if "ttl" not in options:
        return default
    try:
        return float(options["ttl"])
    except ValueError:
        raise ConfigurationError(f"buffer ttl must be a number of seconds, got {options['ttl']!r}") from None


def buffer_fallback(spec: Buffer | str | None) -> bool:
    """True when a spec string asks for `fallback=episodes`."""
    if not isinstance(spec, str):
        return False
    value = _split(spec)[1].get("fallback")
    if value is not None and value not in FALLBACKS:
        raise ConfigurationError(f"unknown buffer fallback {value!r}; known: {', '.join(FALLBACKS)}")
    return value == "episodes"


def open_buffer(
    spec: Buffer | str | None = None,
    *,
    ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
    prefix: str | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> Buffer:
    """A Buffer from an object (returned as is), None / `memory://`, or a `redis://...` URL.

    `clock` drives the in-process buffer's idle expiry (Redis expires keys on its own clock).

    `ttl_seconds` and `prefix` are defaults that the spec's query string overrides.
    Opening a Redis buffer does not connect; the first command does.
    """
    if spec is None:
        return InProcessBuffer(ttl_seconds=ttl_seconds, clock=clock)
    if not isinstance(spec, str):
        if isinstance(spec, Buffer):
            return spec
        raise ConfigurationError(f"a buffer must be a Buffer or a spec string, got {type(spec).__name__}")
    buffer_fallback(spec)
    url, options = _split(spec.strip())
    scheme = urlsplit(url).scheme.lower()
    ttl = _ttl(options, ttl_seconds)
    if scheme == "memory":
        return InProcessBuffer(ttl_seconds=ttl, clock=clock)
    if scheme in _REDIS_SCHEMES:
        from .redis import RedisBuffer

        extra: dict[str, Any] = {"prefix": options.get("prefix", prefix or "")}
        for name in ("wait_replicas", "wait_timeout_ms"):
            if name in options:
                extra[name] = _whole_number(options, name)
        return RedisBuffer(url, ttl_seconds=ttl, **extra)
    raise ConfigurationError(
        f"unknown buffer spec {spec.split('://')[0]!r}; use memory://, redis://host:port/db or redis+cluster://host:port"
    )


def _whole_number(options: dict[str, str], name: str) -> int:
    try:
        return int(options[name])
    except ValueError:
        raise ConfigurationError(f"buffer {name} must be a whole number, got {options[name]!r}") from None


__all__ = ["AppendResult", "Buffer", "InProcessBuffer", "Turn", "buffer_fallback", "open_buffer"]
