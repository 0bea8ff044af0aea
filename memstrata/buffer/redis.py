"""`RedisBuffer`: session buffers in Redis (`MEMSTRATA_BUFFER=redis://host:6379/0`) or in a Redis
Cluster (`redis+cluster://host:7000`, any node; redis-py's `RedisCluster` finds the others).

One list per session at `{prefix}user:{<user_id>}:session:<session_id>`, one JSON turn per entry. The
user id is the key's hash tag, so all of a user's keys live in one cluster slot (one node). Every write
is one Lua script: append + LTRIM to `max_turns` + PEXPIRE (the idle TTL is refreshed on every write).
The append skips turns whose id the list already holds, so retrying an append that raised is safe.
Data survives an application restart, and a Redis restart when the server persists (RDB/AOF). Any
Redis failure raises `BufferUnavailable` naming the URL without its password; nothing is dropped silently.

Acknowledged writes (`wait_replicas=N`): Redis replicates asynchronously, so a write the primary
answered can still be lost when the primary dies before a replica received it. With `wait_replicas`
set, each write is followed by `WAIT N timeout` on the same connection and is acknowledged (the call
returns) only once N replicas hold it; otherwise `BufferUnavailable` is raised, saying the write
reached the primary but is not yet safe. A failover promotes a replica that holds every acknowledged
write when N equals the replicas per primary (docs/postgres.md, "Scale-out"). An unacknowledged write
may still survive (the promoted replica got it before the primary died): the caller's retry then
finds the turn ids in the list and adds nothing, instead of storing the turns twice.

Degraded state: while a primary has fewer replicas than `wait_replicas` (after a failover, until the
old primary rejoins as a replica), every write waits the full `wait_timeout_ms` and raises. The buffer
then reports `degraded` (True from the first unacknowledged write until a write is acknowledged again),
counts `unacknowledged_writes`, and logs one warning when it enters the state and one line when it
leaves it, rather than one per write. A lower `wait_timeout_ms` makes the refusals quicker.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
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
    from redis.cluster import RedisCluster
    from redis.retry import Retry
except ImportError:  # pragma: no cover - exercised only without the extra
    redis = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""Buffer URL schemes naming a Redis Cluster, and the scheme redis-py's `RedisCluster.from_url` takes."""

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

# ARGV: max_turns, ttl_ms, n, then the n turns' heads (`Turn.head`: the serialized turn up to its id,
# '' for a turn without an id), then the n serialized turns. A turn whose head begins an entry the list
# already holds is skipped (a retried append after an unacknowledged write adds nothing); a turn
# without an id is always pushed. Heads are compared as text, not decoded: decoding every held turn
# as JSON tripled the server CPU of an append to a 200-turn session (BENCHMARKS.md §13). Checking
# and pushing in one script keeps the append atomic.
_APPEND = """
local existed = redis.call('EXISTS', KEYS[1])
local n = tonumber(ARGV[3])
local lengths, held = {}, {}
for i = 1, n do
  if ARGV[3 + i] ~= '' then lengths[#ARGV[3 + i]] = true end
end
if next(lengths) then
  for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    for length in pairs(lengths) do held[string.sub(raw, 1, length)] = true end
  end
end
local fresh = {}
for i = 1, n do
  local head = ARGV[3 + i]
  if head == '' or not held[head] then
    fresh[#fresh + 1] = ARGV[3 + n + i]
    if head ~= '' then held[head] = true end
  end
end
if #fresh > 0 then redis.call('RPUSH', KEYS[1], unpack(fresh)) end
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[1]), -1)
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {existed, redis.call('LRANGE', KEYS[1], 0, -1)}
"""

_REPLACE = """
redis.call('DEL', KEYS[1])
if #ARGV > 1 then
  redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))
  if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
end
return 1
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


def _client(url: str, shown: str, timeout: float) -> Any:
    """A `redis.Redis`, or a `RedisCluster` for a `redis+cluster://` URL (any one node of the cluster)."""
    options: dict[str, Any] = {
        "decode_responses": True,
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2),
    }
    parts = urlsplit(url)
    try:
        if parts.scheme.lower() in CLUSTER_SCHEMES:
            plain = urlunsplit((CLUSTER_SCHEMES[parts.scheme.lower()], *parts[1:]))
            return RedisCluster.from_url(plain, **options)
        return redis.Redis.from_url(url, **options)
    except (ValueError, TypeError) as exc:
        raise ConfigurationError(f"invalid Redis URL {shown}: {exc}") from None
    except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException) as exc:  # connects to learn slots
        raise BufferUnavailable(f"Redis Cluster at {shown} is unavailable: {exc}") from exc


def check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise InvalidInput(
            f"invalid buffer key prefix {prefix!r}: use letters, digits and _.:@+-/ (no braces: "
            "the user id is the only Redis Cluster hash tag)"
        )
    return prefix


class RedisBuffer:
    """Session buffers in one Redis database or one Redis Cluster."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
        prefix: str = "",
        timeout: float = 2.0,
        client: Any = None,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        """`client` may be an existing `redis.Redis` or `redis.cluster.RedisCluster`
        (decode_responses=True); otherwise one is built from `url` (`redis+cluster://` for a cluster)
        with `timeout` seconds for connecting and for each command, and two quick retries.
        `wait_replicas` > 0 acknowledges a write only once that many replicas hold it (module doc)."""
        if redis is None:
            raise ConfigurationError("the Redis buffer needs the redis package: pip install 'memstrata-ai[redis]'")
        self.url = redact_url(url)
        self.ttl_seconds = check_ttl(ttl_seconds)
        self.prefix = check_prefix(prefix)
        if wait_replicas < 0 or wait_timeout_ms < 1:
            raise ConfigurationError(
                f"wait_replicas must be >= 0 and wait_timeout_ms >= 1, got {wait_replicas}, {wait_timeout_ms}"
            )
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.unacknowledged_writes = 0
        """Writes refused because too few replicas acknowledged them (since the buffer was opened)."""
        self._degraded = False
        self._state_lock = threading.Lock()
        self._redis = client if client is not None else _client(url, self.url, timeout)
        self._cluster = isinstance(self._redis, RedisCluster)
        self._append = self._redis.register_script(_APPEND)
        self._replace = self._redis.register_script(_REPLACE)
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
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException) as exc:
            raise BufferUnavailable(f"Redis buffer at {self.url} failed ({action}): {exc}") from exc

    def key(self, scope: Scope) -> str:
        return session_key(self.prefix, scope)

    def ping(self) -> None:
        """Raise `BufferUnavailable` unless Redis answers."""
        with self._errors("ping"):
            self._redis.ping()

    def _write(self, script: Any, key: str, args: list[Any], action: str) -> Any:
        """Run a write script on `key`; with `wait_replicas`, WAIT on the same connection afterwards and
        raise `BufferUnavailable` unless enough replicas acknowledged it."""
        with self._errors(action):
            if not self.wait_replicas:
                return script(keys=[key], args=args)
            pipe = self._node_client(key).pipeline(transaction=False)
            script(keys=[key], args=args, client=pipe)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)
            try:
                result, acknowledged = pipe.execute()
            except (redis.exceptions.ConnectionError, redis.exceptions.ResponseError):
                if self._cluster:  # MOVED or a dead node after a failover: learn the new slot owners
                    self._redis.nodes_manager.initialize()
                raise
        if int(acknowledged) < self.wait_replicas:
            message = (
                f"Redis buffer at {self.url}: {action} reached the primary but only {acknowledged} of "
                f"{self.wait_replicas} replica(s) acknowledged it within {self.wait_timeout_ms} ms; it is not "
                "acknowledged and may be lost if the primary fails"
            )
            self._acknowledged(False, message)
            raise BufferUnavailable(message)
        self._acknowledged(True, "")
        return result

    @property
    def degraded(self) -> bool:
        """Whether the last write was refused for want of replica acknowledgements (module doc)."""
        return self._degraded

    def _acknowledged(self, ok: bool, message: str) -> None:
        with self._state_lock:
            if not ok:
                self.unacknowledged_writes += 1
            entered, left = (not ok and not self._degraded), (ok and self._degraded)
            self._degraded = not ok
        if entered:
            log.warning("%s; writes are refused until enough replicas acknowledge again", message)
        elif left:
            log.warning("Redis buffer at %s: writes are acknowledged by replicas again", self.url)

    def _node_client(self, key: str) -> Any:
        """The client of the node serving `key` (the client itself outside a cluster): WAIT counts the
        replicas that hold the writes of ITS connection, so it must follow the write on one connection."""
        if not self._cluster:
            return self._redis
        return self._redis.get_redis_connection(self._redis.get_node_from_key(key))

    def append(self, scope: Scope, turns: Sequence[Turn], *, max_turns: int) -> AppendResult:
        check_max_turns(max_turns)
        args = [max_turns, self._ttl_ms, len(turns), *[t.head() for t in turns], *[t.to_json() for t in turns]]
        existed, raw = self._write(self._append, self.key(scope), args, "append")
        return AppendResult([Turn.from_json(r) for r in raw], bool(existed))

    def window(self, scope: Scope) -> list[Turn] | None:
        with self._errors("read"):
            raw = cast(list[str], self._redis.lrange(self.key(scope), 0, -1))
        return [Turn.from_json(r) for r in raw] if raw else None

    def replace(self, scope: Scope, turns: Sequence[Turn]) -> None:
        self._write(self._replace, self.key(scope), [self._ttl_ms, *[t.to_json() for t in turns]], "replace")

    def trim_through(self, scope: Scope, turn_id: str) -> int:
        return int(self._write(self._trim_through, self.key(scope), [turn_id, self._ttl_ms], "trim"))

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
        """UNLINK every `{prefix}user:{<user_id>}:*` key (found by SCAN, never KEYS; in a cluster on the
        one node serving the user's hash tag)."""
        prefix = user_key_prefix(self.prefix, validate_id(user_id, "user_id"))
        pattern = _GLOB_SPECIALS.sub(r"\\\1", prefix) + "*"
        removed = 0
        with self._errors("clear user"):
            scanner = self._node_client(prefix) if self._cluster else self._redis
            keys = list(dict.fromkeys(scanner.scan_iter(match=pattern, count=500)))
            for chunk in batched(keys, 500):
                removed += int(self._redis.unlink(*chunk))
        return removed

    def close(self) -> None:
        self._redis.close()
