"""add_message latency with a slow LLM: the summary fold queued (now) versus folded inline (before).

The LLM is the project's fake OpenAI-compatible HTTP server (tests/llm/servers.py) answering every
request after `--delay` seconds. Each round runs one session of `--messages` turns per mode, the two
modes alternating in one run so both see the same machine load; the queued mode's folds then run
through `process_queue()` (timed separately: the work moved off the conversation path).
"Inline" rebuilds the old behaviour by clearing the conversation layer's `fold_later`.

    nice -n 5 .venv/bin/python benchmarks/queued_fold_latency.py --out benchmarks/results/queued-fold-latency.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memstrata import Memory, Scope  # noqa: E402
from memstrata.embedders.hashing import HashingEmbedder  # noqa: E402
from memstrata.llm import OpenAICompatibleLLM  # noqa: E402
from memstrata.settings import Settings  # noqa: E402
from tests.llm.servers import API_KEY, FakeLLMServer, Reply, openai_server  # noqa: E402


def run_session(server: FakeLLMServer, directory: Path, *, mode: str, messages: int, delay: float) -> dict[str, Any]:
    server.script(*[Reply(text="The user and the assistant talked.", delay=delay) for _ in range(messages)])
    llm = OpenAICompatibleLLM(server.base_url, "fake-model", api_key=API_KEY, max_retries=0)
    settings = Settings(llm=None, buffer="memory://", consolidate_every_turns=0)
    store = f"sqlite:///{directory / f'{mode}-{time.monotonic_ns()}.db'}"
    with Memory(store=store, embedder=HashingEmbedder(64), llm=llm, settings=settings) as memory:
        if mode == "inline":
            memory._layers.conversation.fold_later = None  # the behaviour before folds were queued
        scope = Scope("bench", session_id="s1")
        latencies = []
        for n in range(messages):
            started = time.perf_counter()
            memory.add_message("user" if n % 2 else "assistant", f"message {n} about the trip to Lisbon", scope=scope)
            latencies.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        jobs = memory.process_queue()
        queue_ms = (time.perf_counter() - started) * 1000
        summary = memory.session_summary(scope=scope)
    ordered = sorted(latencies)
    return {
        "mode": mode, "messages": messages, "median_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2), "max_ms": round(ordered[-1], 2),
        "total_ms": round(sum(latencies), 1), "queue_jobs": jobs, "queue_ms": round(queue_ms, 1),
        "summarized": bool(summary),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the LLM takes per answer")
    parser.add_argument("--messages", type=int, default=40, help="turns per session")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    with openai_server(api_key=API_KEY) as server, tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, args.rounds + 1):
            for mode in ("inline", "queued"):
                runs.append({"round": round_} | run_session(server, Path(tmp), mode=mode, messages=args.messages,
                                                            delay=args.delay))  # fmt: skip
                print(json.dumps(runs[-1]), file=sys.stderr)
    summary = {}
    for mode in ("inline", "queued"):
        mine = [r for r in runs if r["mode"] == mode]
        summary[mode] = {key: statistics.median(r[key] for r in mine) for key in ("median_ms", "p95_ms", "max_ms",
                                                                                   "total_ms", "queue_ms")}  # fmt: skip
    ratios = {
        key: round(summary["inline"][key] / summary["queued"][key], 1) for key in ("p95_ms", "max_ms", "total_ms")
    }
    result = {
        "benchmark": "add_message latency with a slow LLM (summary fold queued vs inline)",
        "llm_delay_s": args.delay, "messages_per_session": args.messages, "rounds": args.rounds,
        "medians_over_rounds": summary, "inline_over_queued": ratios, "runs": runs,
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
    }  # fmt: skip
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
