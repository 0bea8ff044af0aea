"""Bounded load test of `memstrata serve` on loopback.

Starts a server in a child process (fresh SQLite store in a temp dir, the default embedder, API keys
on), then runs N concurrent clients for D seconds, each looping over a weighted mix of add / search /
context requests for its own user, and stops by itself. Writes benchmarks/results/load.json: request
and error counts, throughput, p50/p95/p99 latency per operation.

    python -m memstrata_bench.load              # 50 clients, 30 s (the defaults)
    python -m memstrata_bench.load --clients 100 --duration 60
    python -m memstrata_bench.load --url http://127.0.0.1:8420 --key msk_...   # an already running server
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from . import selfrun

RESULTS = selfrun.TOOL_ROOT / "results"
WORDS = (
    "tea",
    "coffee",
    "hiking",
    "berlin",
    "paris",
    "kyoto",
    "manager",
    "sarah",
    "project",
    "deadline",
    "budget",
    "python",
    "rust",
    "guitar",
    "piano",
    "marathon",
    "dentist",
    "birthday",
    "sister",
    "brother",
    "dog",
    "cat",
    "garden",
    "novel",
    "jazz",
    "climbing",
    "sushi",
    "pasta",
    "meeting",
    "report",
)
MIX = (("add", 0.4), ("search", 0.4), ("context", 0.2))


def sentence(rng: random.Random) -> str:
    return f"The user mentioned {' '.join(rng.sample(WORDS, 5))} on day {rng.randint(1, 365)}"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


async def client_loop(
    http: httpx.AsyncClient,
    user: str,
    seed: int,
    stop_at: float,
    samples: dict[str, list[float]],
    errors: list[str],
) -> None:
    rng = random.Random(seed)
    operations = [name for name, _ in MIX]
    weights = [weight for _, weight in MIX]
    while time.perf_counter() < stop_at:
        operation = rng.choices(operations, weights)[0]
        request: tuple[str, str, dict[str, Any]]
        if operation == "add":
            request = ("POST", f"/v1/users/{user}/memories", {"content": sentence(rng)})
        elif operation == "search":
            request = ("POST", f"/v1/users/{user}/search", {"query": " ".join(rng.sample(WORDS, 3)), "k": 10})
        else:
            request = (
                "POST",
                f"/v1/users/{user}/context",
                {"query": " ".join(rng.sample(WORDS, 3)), "max_tokens": 500},
            )
        start = time.perf_counter()
        try:
            response = await http.request(request[0], request[1], json=request[2])
            if response.status_code >= 400:
                errors.append(f"{operation}: HTTP {response.status_code} {response.text[:200]}")
        except httpx.HTTPError as exc:
            errors.append(f"{operation}: {type(exc).__name__}: {exc}")
        samples[operation].append(time.perf_counter() - start)


async def run_load(url: str, key: str, clients: int, duration: float) -> dict[str, Any]:
    samples: dict[str, list[float]] = {name: [] for name, _ in MIX}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as http:
        # Seed every user with a few memories so search and context have something to rank.
        seeds = [{"content": sentence(random.Random(i))} for i in range(clients)]
        await asyncio.gather(*(http.post(f"/v1/users/load-{i}/memories", json=seeds[i]) for i in range(clients)))
        started = time.perf_counter()
        stop_at = started + duration
        await asyncio.gather(*(client_loop(http, f"load-{i}", i, stop_at, samples, errors) for i in range(clients)))
        elapsed = time.perf_counter() - started
    every = [s for values in samples.values() for s in values]
    ms = lambda values, q: round(percentile(values, q) * 1000, 2)  # noqa: E731
    return {
        "requests": len(every),
        "errors": len(errors),
        "error_samples": errors[:10],
        "elapsed_s": round(elapsed, 2),
        "throughput_rps": round(len(every) / elapsed, 1),
        "latency_ms": {
            "all": {"p50": ms(every, 50), "p95": ms(every, 95), "p99": ms(every, 99)},
            **{
                name: {
                    "count": len(v),
                    "p50": ms(v, 50),
                    "p95": ms(v, 95),
                    "p99": ms(v, 99),
                    "mean": round(statistics.fmean(v) * 1000, 2) if v else None,
                }
                for name, v in samples.items()
            },
        },
    }


# -- the server under test ------------------------------------------------------
def serve(db: str, port: int, embedder: str) -> None:
    """Child-process entry: run the app on loopback (keys on, no UI, no MCP)."""
    import uvicorn

    from memstrata import Memory
    from memstrata.server.app import create_app
    from memstrata.server.config import ServerConfig

    memory = Memory(store=f"sqlite:///{db}", embedder=embedder)
    config = ServerConfig(host="127.0.0.1", port=port, ui=False, mcp=False)
    uvicorn.run(create_app(memory=memory, config=config), host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(workdir: Path, embedder: str) -> tuple[subprocess.Popen[bytes], str, str]:
    from memstrata.server.auth import KeyRing
    from memstrata.storage import open_store

    db = workdir / "load.db"
    store = open_store(f"sqlite:///{db}")
    _, key = KeyRing(store).create("load", name="load test")
    store.close()
    port = free_port()
    code = f"from memstrata_bench import load; load.serve({str(db)!r}, {port}, {embedder!r})"
    process = subprocess.Popen([sys.executable, "-c", code], env=selfrun.environment())
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url, key
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise RuntimeError("the server process exited during start-up")
        time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the server did not become healthy within 60 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load after seeding")
    parser.add_argument("--embedder", default="static", help="embedder of the spawned server")
    parser.add_argument("--url", help="use this running server instead of spawning one (needs --key)")
    parser.add_argument("--key", help="API key for --url (an admin key of its tenant)")
    parser.add_argument("--out", default=str(RESULTS / "load.json"))
    args = parser.parse_args()
    if args.clients < 1 or args.duration <= 0:
        parser.error("--clients and --duration must be positive")

    load_before = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="memstrata-load-") as tmp:
        process = None
        if args.url:
            if not args.key:
                parser.error("--url needs --key")
            url, key = args.url, args.key
        else:
            process, url, key = start_server(Path(tmp), args.embedder)
        try:
            result = asyncio.run(run_load(url, key, args.clients, args.duration))
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=30)

    report = {
        "benchmark": "load",
        "clients": args.clients,
        "duration_s": args.duration,
        "mix": dict(MIX),
        "server": "spawned: SQLite file, single uvicorn process" if not args.url else args.url,
        "embedder": args.embedder if not args.url else "server's",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_1m_before": load_before,
            "load_average_1m_after": round(os.getloadavg()[0], 2),
            "note": "client and server share the machine's cores",
        },
        **result,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
