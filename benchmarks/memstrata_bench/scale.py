"""`memstrata-bench scale`: latency curves over store size, layout and backend.

A *point* is one `memstrata-bench latency` run (see `latency.py` for what it measures) in a fresh
subprocess, so its resident memory is its own and a crash ends only that point. Points:

* sizes 1k, 10k, 100k, 1M memories (capped by `--max-memories`);
* layouts `one_user` (every memory in one user) and `many_users` (100 memories per user, so
  1M = 10,000 users);
* stores `sqlite` (a temporary file) and `postgres` (a throwaway database and app role).

Each finished point is appended to the result file at once, so a long run can be stopped and
resumed (`--resume` skips points already in the file with the same parameters).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memstrata import InvalidInput

from . import selfrun
from .report import write_result

SIZES = (1_000, 10_000, 100_000, 1_000_000)
LAYOUTS = ("one_user", "many_users")
STORES = ("sqlite", "postgres")
PER_SMALL_USER = 100
RESULT_NAME = "scale"
Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Point:
    store: str
    layout: str
    memories: int
    queries: int
    context_queries: int

    @property
    def users(self) -> int:
        return 1 if self.layout == "one_user" else max(1, self.memories // PER_SMALL_USER)

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.store, self.layout, self.memories, self.queries)

    def argv(self) -> list[str]:
        return [
            "latency",
            "--store",
            self.store,
            "--memories",
            str(self.memories),
            "--users",
            str(self.users),
            "--queries",
            str(self.queries),
            "--context-queries",
            str(self.context_queries),
            "--json",
        ]


def plan(
    *,
    stores: Sequence[str] = STORES,
    layouts: Sequence[str] = LAYOUTS,
    sizes: Sequence[int] = SIZES,
    max_memories: int | None = None,
    queries: int = 200,
    context_queries: int = 50,
) -> list[Point]:
    """The points to run, smallest first (so a capped or interrupted run still yields whole curves)."""
    for name, given, known in (("store", stores, STORES), ("layout", layouts, LAYOUTS)):
        bad = [g for g in given if g not in known]
        if bad:
            raise InvalidInput(f"unknown {name} {bad}; known: {', '.join(known)}")
    if any(s < 1 for s in sizes):
        raise InvalidInput("sizes must be positive")
    chosen = sorted({s for s in sizes if max_memories is None or s <= max_memories})
    return [
        Point(store, layout, size, queries, context_queries)
        for size in chosen
        for store in stores
        for layout in layouts
    ]


def done_keys(result: dict[str, Any]) -> set[tuple[str, str, int, int]]:
    """Keys of the points of an earlier result that finished without error."""
    keys = set()
    for point in result.get("points", []):
        if "error" not in point:
            keys.add((point["store"], point["layout"], int(point["memories"]), int(point["requested_queries"])))
    return keys


def parse_output(stdout: str) -> dict[str, Any]:
    """The JSON object a `bench latency --json` child printed (its last non-empty line)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise InvalidInput("the latency run printed nothing")
    parsed = json.loads(lines[-1])
    if not isinstance(parsed, dict):
        raise InvalidInput("the latency run did not print a JSON object")
    return parsed


def run_point(point: Point, *, python: str = sys.executable, timeout: float | None = None) -> dict[str, Any]:
    """Run one point in a subprocess; its progress bar goes to our stderr."""
    started = time.perf_counter()
    base = {**asdict(point), "users": point.users, "requested_queries": point.queries}
    with subprocess.Popen(
        [*selfrun.command(python), *point.argv(), "--progress"],
        stdout=subprocess.PIPE,
        env=selfrun.environment(),
        text=True,
    ) as proc:
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except BaseException as exc:  # timeout or Ctrl-C: SIGTERM lets the child drop its throwaway database
            stop(proc)
            if isinstance(exc, subprocess.TimeoutExpired):
                return {**base, "error": f"timed out after {timeout} s"}
            raise
    if proc.returncode != 0:
        return {**base, "error": f"exit code {proc.returncode}", "stdout": stdout[-2000:]}
    result = parse_output(stdout)
    result.pop("machine", None)
    return {**result, **base, "wall_s": round(time.perf_counter() - started, 1)}


def stop(proc: subprocess.Popen[str], grace: float = 60.0) -> None:
    """Terminate a child politely (it cleans up on SIGTERM), then for good after `grace` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(
    points: Sequence[Point],
    out_dir: str | Path,
    *,
    name: str = RESULT_NAME,
    resume: bool = False,
    timeout: float | None = None,
    log: Log | None = None,
) -> dict[str, Any]:
    """Run `points` one after another, rewriting OUT_DIR/NAME.json after each."""
    path = Path(out_dir) / f"{name}.json"
    previous: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if resume and path.exists() else {}
    skip = done_keys(previous)
    kept = [p for p in previous.get("points", []) if "error" not in p]
    result: dict[str, Any] = {
        "benchmark": "scale",
        "command": "memstrata-bench scale",
        "per_small_user": PER_SMALL_USER,
        "points": kept,
    }
    todo = [p for p in points if p.key not in skip]
    for number, point in enumerate(todo, start=1):
        if log:
            log(
                f"[{number}/{len(todo)}] {point.store} {point.layout} "
                f"{point.memories:,} memories, {point.users:,} users"
            )
        measured = run_point(point, timeout=timeout)
        result["points"].append(measured)
        write_result(out_dir, name, result)
        if log and "error" in measured:
            log(f"  failed: {measured['error']}")
    if not todo:
        write_result(out_dir, name, result)
    return result


def curves(result: dict[str, Any], metric: str) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(store, layout) -> [(memories, metric)] sorted by size, for plotting and tables (pure)."""
    found: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for point in result.get("points", []):
        value = point.get(metric)
        if "error" in point or value is None:
            continue
        found.setdefault((point["store"], point["layout"]), []).append((int(point["memories"]), float(value)))
    return {key: sorted(values) for key, values in found.items()}


__all__ = [
    "LAYOUTS",
    "SIZES",
    "STORES",
    "Point",
    "curves",
    "done_keys",
    "parse_output",
    "plan",
    "run",
    "run_point",
]


def _cell(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def markdown_table(result: dict[str, Any]) -> str:
    """The scale points as a Markdown table (pure); failed points show their error."""
    head = (
        "| store | layout | memories | users | add/s (batch) | messages/s (batch) | bulk load/s "
        "| search p50 / p95 / p99 ms | search p95 ms, no embedding | embed p50 ms | context p50 / p95 / p99 ms "
        "| RSS MB | RSS B/memory | disk B/memory |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for p in sorted(result.get("points", []), key=lambda p: (p["memories"], p["store"], p["layout"])):
        if "error" in p:
            rows.append(f"| {p['store']} | {p['layout']} | {p['memories']:,} | {p['users']:,} | error: {p['error']} |")
            continue
        triple = {
            m: " / ".join(_cell(p.get(f"{m}_{q}"), 2) for q in ("p50", "p95", "p99"))
            for m in ("search_ms", "context_ms")
        }
        cells = [
            p["store"],
            p["layout"],
            f"{p['memories']:,}",
            f"{p['users']:,}",
            _cell(p.get("add_per_s"), 0),
            _cell(p.get("add_messages_per_s"), 0),
            _cell(p.get("load_per_s"), 0),
            triple["search_ms"],
            _cell(p.get("search_no_embed_ms_p95"), 2),
            _cell(p.get("embed_ms_p50"), 2),
            triple["context_ms"],
            _cell(p.get("rss_mb_end")),
            _cell(p.get("rss_bytes_per_memory"), 0),
            _cell(p.get("disk_bytes_per_memory"), 0),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows) + "\n"


def breakdown_table(result: dict[str, Any]) -> str:
    """Where a search spends its time: p50 of the whole search and of each store call alone (pure)."""
    head = (
        "| store | layout | memories | search p50 ms | no embedding | embed | vector_search (top 50) "
        "| keyword_search (top 50) | both in one read | record_access (top 10) | source found in top k |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for p in sorted(result.get("points", []), key=lambda p: (p["memories"], p["store"], p["layout"])):
        if "error" in p or "store_vector_ms_p50" not in p:
            continue
        metrics = (
            "search_ms",
            "search_no_embed_ms",
            "embed_ms",
            "store_vector_ms",
            "store_keyword_ms",
            "store_hybrid_ms",
            "store_access_ms",
        )
        cells = [
            p["store"],
            p["layout"],
            f"{p['memories']:,}",
            *(_cell(p.get(f"{m}_p50"), 2) for m in metrics),
            _cell(p.get("source_at_k"), 3),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows) + "\n"
