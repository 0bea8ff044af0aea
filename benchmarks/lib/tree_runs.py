"""Shared by the Python before/after benchmarks: run a probe under two source trees, alternating, and
write the result file. The shell scripts' counterpart is `before_after.sh`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.bench.report import machine_info


def run_probe(tree: Path, probe: str, *args: str) -> dict[str, Any]:
    """Run the Python source `probe` in a fresh interpreter with `tree` (a source tree holding
    `memstrata/`) on PYTHONPATH, from a neutral directory; its last line of output is a JSON object."""
    env = os.environ | {"PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", probe, *args], env=env, cwd="/", capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def alternate(rounds: int, trees: dict[str, Path], measure: Callable[[Path], dict[str, Any]]) -> dict[str, list]:
    """`measure` each of the two trees ("before", "after") once per round, the order swapped every round
    so neither side always runs on the machine the other just warmed."""
    runs: dict[str, list] = {"before": [], "after": []}
    for number in range(rounds):
        for side in ("before", "after") if number % 2 == 0 else ("after", "before"):
            runs[side].append(measure(trees[side]))
            print(side, runs[side][-1], file=sys.stderr)
    return runs


def write_result(benchmark: str, fields: dict[str, Any], script: str, out: Path | None) -> None:
    """Print the result object (with the command that made it and the machine) and write it to `out`."""
    result = {
        "benchmark": benchmark,
        **fields,
        "command": f"python benchmarks/{script} " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
    }
    text = json.dumps(result, indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)
