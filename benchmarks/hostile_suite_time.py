"""Wall and CPU time of the hostile test suite (tests/security) before and after a change, in one run.

    python benchmarks/hostile_suite_time.py BEFORE_REV [--rounds 2] [--out benchmarks/results/hostile-suite-time.json]

The suite of BEFORE_REV (its tests and its `memstrata/`, exported with `git archive`) and the suite of
this checkout run alternately, `rounds` times each, with this checkout's virtualenv, so both sides see
the same machine load. CPU time is the user + system time of the pytest process and its children
(worker subprocesses); PostgreSQL's own work is not in it. Bytecode is cached (as on CI), and one
untimed run of each side warms the caches first. A run with failures is timed and counted all the
same (its `failed` count says so): a property test may draw a failing example on either side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memstrata.bench.report import machine_info  # noqa: E402


def run_suite(checkout: Path, seed: int | None) -> dict[str, float | int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(checkout)}
    command = [str(ROOT / ".venv/bin/python"), "-m", "pytest", "tests/security", "-q", "-p", "no:randomly"]
    command += [f"--hypothesis-seed={seed}"] if seed is not None else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    counts = {name: int(n) for n, name in re.findall(r"(\d+) (passed|skipped|failed)", summary)}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before_rev")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, help="the same hypothesis seed on both sides (the same examples drawn)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/hostile-suite-time.json"))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", options.before_rev], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
        sides = {"before": before, "after": ROOT}
        for checkout in sides.values():
            run_suite(checkout, options.seed)  # warm the bytecode and the OS caches
        runs: dict[str, list[dict[str, float | int]]] = {side: [] for side in sides}
        for _ in range(options.rounds):
            for side, checkout in sides.items():
                runs[side].append(run_suite(checkout, options.seed))
                print(side, runs[side][-1], file=sys.stderr, flush=True)
    result = {
        "before_rev": options.before_rev,
        "hypothesis_seed": options.seed,
        "runs": runs,
        "median": {side: {k: median(float(r[k]) for r in rs) for k in ("wall_s", "cpu_s")} for side, rs in runs.items()},
        "machine": machine_info(),
        "command": "python benchmarks/hostile_suite_time.py " + " ".join(sys.argv[1:]),
    }
    Path(options.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["median"], indent=2))


if __name__ == "__main__":
    main()
