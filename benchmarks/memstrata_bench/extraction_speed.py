"""Speed of the offline extractor, two versions of the code alternated in one run (A/B).

`python -m memstrata_bench.extraction_speed --locomo locomo-dev.json --before DIR --out FILE` times
`RuleExtractor` over the LoCoMo turns of every `event_summary` session (CPU time, so another
process on the machine slows both versions alike), once with the memstrata package found in DIR
(e.g. `git archive <commit> memstrata | tar -x -C DIR`) and once with this one, `rounds` times
alternated; it writes every run, each version's median and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .selfrun import TOOL_ROOT, memstrata_source

_TIMED = """
import json, sys, time
from memstrata_bench.extraction_locomo import load, session_facts
from memstrata.extraction.rules import RuleExtractor
turns = [t for sample in load(sys.argv[1]) for group in session_facts(sample) for t in group.turns]
extractor = RuleExtractor()
started = time.process_time()
for turn in turns:
    extractor.extract([turn])
spent = time.process_time() - started
print(json.dumps({"turns": len(turns), "cpu_s": round(spent, 4), "messages_per_cpu_s": round(len(turns) / spent)}))
"""


def time_once(locomo: str | Path, source: str | Path | None) -> dict[str, Any]:
    """One timed pass in a fresh interpreter, importing memstrata from `source` (None: this package)."""
    root = Path(source) if source is not None else memstrata_source()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(TOOL_ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", _TIMED, str(Path(locomo).resolve())],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run(locomo: str | Path, before: str | Path, *, rounds: int = 3) -> dict[str, Any]:
    """`rounds` alternated passes of the `before` code and this one, with medians and their ratio."""
    runs = []
    for _ in range(rounds):
        runs.append({"version": "before", **time_once(locomo, before)})
        runs.append({"version": "after", **time_once(locomo, None)})
    medians = {
        version: statistics.median(r["messages_per_cpu_s"] for r in runs if r["version"] == version)
        for version in ("before", "after")
    }
    return {
        "benchmark": "extraction-speed-ab",
        "what": f"RuleExtractor CPU time over the LoCoMo event_summary turns, before/after alternated {rounds} times",
        "runs": runs,
        "before_median_messages_per_cpu_s": medians["before"],
        "after_median_messages_per_cpu_s": medians["after"],
        "ratio": round(medians["after"] / medians["before"], 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--before", required=True, help="a directory holding the memstrata package to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = run(args.locomo, args.before, rounds=args.rounds)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
