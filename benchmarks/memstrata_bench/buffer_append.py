"""`python -m memstrata_bench.buffer_append`: what one session-buffer append costs, by how many turns the
session already holds.

For each backend (the in-process buffer, and Redis at `--redis-url`) and each held size, a session is filled
with that many turns (`Buffer.replace`), then `--appends` single-turn appends follow with `max_turns` equal to
the held size, so the list keeps its length and every append pays for the turns it holds (the Redis append
reads them to skip a turn it already holds). Per backend and size it reports the wall time of an append
(p50/p95/p99 ms) and, for Redis, the server's CPU per append (`INFO cpu`, user + system; the server is shared,
so other clients' work counts too). Turns carry ~200 characters, about a chat message.

The conversation layer appends with `max_turns = window_size + summary_threshold + len(turns)` (19 by
default), so the first size is the everyday one; the larger ones show how the cost grows.
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from memstrata import Scope
from memstrata.buffer import Buffer, InProcessBuffer, Turn

from .report import comma_list, latency_summary, write_result

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXT = "I moved to Lisbon last spring and started a pottery class on Thursdays; the teacher is Ana. " * 2


def _turn(n: int) -> Turn:
    return Turn("user" if n % 2 else "assistant", f"{n}: {TEXT}", AT, id=f"turn-{n:08d}")


def _server_cpu(buffer: Buffer) -> float | None:
    client = getattr(buffer, "_redis", None)
    if client is None:
        return None
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(buffer: Buffer, held: int, appends: int) -> dict[str, Any]:
    """Append `appends` new turns one by one to a session holding `held` turns (kept at `held`)."""
    scope = Scope("bench-user", session_id=f"s-{held}")
    buffer.replace(scope, [_turn(n) for n in range(held)])
    buffer.append(scope, [_turn(held)], max_turns=held)  # warm: scripts loaded, connection open
    ms = []
    cpu_before = _server_cpu(buffer)
    for n in range(held + 1, held + 1 + appends):
        started = time.perf_counter()
        buffer.append(scope, [_turn(n)], max_turns=held)
        ms.append((time.perf_counter() - started) * 1000)
    cpu_after = _server_cpu(buffer)
    window = buffer.window(scope) or []
    if len(window) != held or window[-1].id != _turn(held + appends).id:
        raise RuntimeError(f"the session holds {len(window)} turns, expected {held} ending with the last append")
    buffer.clear_session(scope)
    result: dict[str, Any] = {"held": held, "appends": appends, **latency_summary(ms, "append_ms")}
    if cpu_before is not None and cpu_after is not None:
        result["server_cpu_ms_per_append"] = round((cpu_after - cpu_before) * 1000 / appends, 4)
    return result


def _open(backend: str, redis_url: str) -> Buffer:
    if backend == "memory":
        return InProcessBuffer(ttl_seconds=3600)
    from memstrata.buffer.redis import RedisBuffer

    return RedisBuffer(redis_url, ttl_seconds=3600, prefix=f"bench-append-{uuid.uuid4().hex[:8]}:")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="memory,redis", help="comma list of memory, redis")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--held", default="19,200,1000", help="comma list of turns a session holds")
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--out", default="benchmarks/results/buffer-append")
    parser.add_argument("--name", default="buffer-append")
    args = parser.parse_args(argv)
    rows = []
    for backend in comma_list(args.backends):
        buffer = _open(backend, args.redis_url)
        try:
            for held in (int(h) for h in comma_list(args.held)):
                rows.append({"backend": backend, **measure(buffer, held, args.appends)})
        finally:
            buffer.close()
    path = write_result(args.out, args.name, {"benchmark": "buffer_append", "rows": rows})
    print(path)


if __name__ == "__main__":
    main()
