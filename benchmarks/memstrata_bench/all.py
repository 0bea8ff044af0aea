"""`memstrata-bench all`: every benchmark behind BENCHMARKS.md, one result file each.

Each step is a `memstrata-bench ...` command run as a subprocess (so one step's memory or crash
never touches the next); the list below is the single place that says which commands make which
result files, and BENCHMARKS.md quotes the same commands. `--quick` runs the same steps at smoke
sizes (for tests and a first look), writing to the same file names in the chosen directory.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import selfrun
from .latency import ProgressBar
from .report import comma_list

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    argv: tuple[str, ...]
    result: str
    """The result file (under --out) the step writes."""
    module: str | None = None
    """A module of this package to run (`python -m memstrata_bench.<module>`) instead of `memstrata-bench`."""

    @property
    def command(self) -> str:
        return " ".join(
            ["python", "-m", f"memstrata_bench.{self.module}", *self.argv]
            if self.module
            else ["memstrata-bench", *self.argv]
        )

    def args(self, python: str) -> list[str]:
        if self.module:
            return [python, "-m", f"memstrata_bench.{self.module}", *self.argv]
        return [*selfrun.command(python), *self.argv]


SAMPLED_1M = ("--queries", "50", "--context-queries", "10")
"""The 1M-memory points time fewer queries: loading dominates them (see BENCHMARKS.md)."""


def steps(
    data: str | None,
    out: str,
    *,
    quick: bool = False,
    max_memories: int | None = None,
    stores: str = "sqlite,postgres",
    resume: bool = False,
    skip: Sequence[str] = (),
    longmemeval: str | None = None,
) -> list[Step]:
    """The benchmark commands in run order (pure). Steps needing LoCoMo are left out without `data`,
    the LongMemEval steps without `longmemeval`."""
    found: list[Step] = []
    if data:
        conversations = ("--conversations", "2") if quick else ()
        for strategy in ("hybrid", "semantic", "keyword"):
            argv = ("locomo", "--data", data, "--strategy", strategy, "--out", out, "--json")
            found.append(Step(f"locomo-{strategy}", argv, f"locomo-{strategy}.json"))
        for mode in ("extracted", "both"):
            argv = ("locomo", "--data", data, "--mode", mode, "--out", out, "--json")
            found.append(Step(f"locomo-hybrid-{mode}", argv, f"locomo-hybrid-{mode}.json"))
        found.append(Step("peers", ("peers", "--data", data, *conversations, "--out", out, "--json"), "peers.json"))
        embedders = (str(Path(out) / "embedders.json"), "--locomo", data, *(() if quick else ("--e5",)))
        found.append(Step("embedders", embedders, "embedders.json", module="embedders"))
    if longmemeval:
        found.extend(longmemeval_steps(longmemeval, out, quick=quick))
    found.append(Step("extraction", ("extraction", "--out", out, "--json"), "extraction.json"))
    learn = ("--memories", "1000", "--messages", "50") if quick else ("--memories", "10000")
    found.append(Step("learn", ("learn", *learn, "--out", out, "--json"), f"learn-{learn[1]}.json"))
    load = ("--clients", "5", "--duration", "3") if quick else ()
    found.append(Step("load", (*load, "--out", str(Path(out) / "load.json")), "load.json", module="load"))
    cap = 1_000 if quick else max_memories
    scale = ["scale", "--out", out, "--stores", stores, "--max-memories", str(min(cap or 100_000, 100_000))]
    if quick:
        scale += ["--queries", "20", "--context-queries", "5"]
    found.append(Step("scale", (*scale, *(["--resume"] if resume else [])), "scale.json"))
    if cap is None or cap >= 1_000_000:
        sampled = ("scale", "--out", out, "--stores", stores, "--sizes", "1000000", *SAMPLED_1M, "--resume")
        found.append(Step("scale-1m", sampled, "scale.json"))
    if not quick and (cap is None or cap >= 100_000):
        found.extend(target_steps(out, comma_list(stores)))
    found.append(Step("plots", ("plots", "--results", out, "--out", str(Path(out).parent / "plots")), "../plots/*.png"))
    return [s for s in found if s.name not in skip]


def longmemeval_steps(data: str, out: str, *, quick: bool = False) -> list[Step]:
    """`bench longmemeval` at both granularities and `bench peers` on LongMemEval (pure)."""
    limit = ("--limit", "3") if quick else ()
    found = []
    for granularity in ("turn", "session"):
        argv = ("longmemeval", "--data", data, "--granularity", granularity, *limit, "--out", out, "--json")
        found.append(Step(f"longmemeval-{granularity}", argv, f"longmemeval-{granularity}.json"))
    peers = ("peers", "--benchmark", "longmemeval", "--data", data, *limit, "--out", out, "--json")
    found.append(Step("peers-longmemeval", peers, "peers-longmemeval.json"))
    return found


REPEATS = 3
"""Extra runs of the Postgres 100k-memory tenant (its p95 target sits closest to the line)."""
BUDGETS = (("unpruned", "0"), ("pruned", None), ("budget2000", "2000"))
"""SQLite keyword posting budgets compared at 100k memories in one user: (file suffix, --posting-budget)."""


def target_steps(out: str, stores: Sequence[str]) -> list[Step]:
    """The single points BENCHMARKS.md quotes beside the curves (pure): the Postgres 100k-memory tenant
    repeated and with one core kept busy, and the SQLite posting-budget comparison."""
    found: list[Step] = []
    point = ("latency", "--memories", "100000", "--users", "1", "--out", out, "--json")
    if "postgres" in stores:
        for number in range(1, REPEATS + 1):
            name = f"latency-postgres-100000-1-run{number}"
            found.append(Step(name, (*point, "--store", "postgres", "--name", name), f"{name}.json"))
        name = "latency-postgres-100000-1-busy1"
        found.append(Step(name, (*point, "--store", "postgres", "--busy-cores", "1", "--name", name), f"{name}.json"))
    if "sqlite" in stores:
        for suffix, budget in BUDGETS:
            name = f"latency-sqlite-100000-1-{suffix}"
            option = ("--posting-budget", budget) if budget else ()
            argv = (*point, "--store", "sqlite", *option, "--context-queries", "10", "--name", name)
            found.append(Step(name, argv, f"{name}.json"))
    return found


def run(chosen: Sequence[Step], *, python: str = sys.executable, log: Log | None = None) -> dict[str, dict[str, Any]]:
    """Run the steps in order; a failing step is reported and the rest still run."""
    bar = ProgressBar("bench all")
    outcome: dict[str, dict[str, Any]] = {}
    for number, step in enumerate(chosen):
        bar(f"{step.name} ({number + 1}/{len(chosen)})", number / len(chosen))
        bar.done()
        if log:
            log(f"$ {step.command}")
        started = time.perf_counter()
        proc = subprocess.run(step.args(python), stdout=subprocess.DEVNULL, env=selfrun.environment(), check=False)
        seconds = round(time.perf_counter() - started, 1)
        outcome[step.name] = {"exit_code": proc.returncode, "seconds": seconds, "result": step.result}
        if log and proc.returncode:
            log(f"  step {step.name} failed with exit code {proc.returncode}")
    bar("done", 1.0)
    bar.done()
    return outcome


__all__ = ["Step", "run", "steps"]
