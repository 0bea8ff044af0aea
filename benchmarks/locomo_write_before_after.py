"""Write throughput of the SQLite store before and after a change, in one run: LoCoMo's turns stored
with `Memory.add_many` (as `bench locomo` ingests them: episodes with their two-turn context, batches of
256, the static embedder), into a fresh SQLite file, timed per side, alternating.

    python benchmarks/locomo_write_before_after.py BEFORE_SRC AFTER_SRC LOCOMO_JSON [--rounds 5] [--out FILE]

BEFORE_SRC and AFTER_SRC are source trees holding `memstrata/` (e.g. `git archive REV memstrata | tar -x`).
Each timing runs in a fresh subprocess with that tree on PYTHONPATH and this interpreter; the order of the
two sides alternates from round to round, so neither always runs on the machine the other just warmed.
Reported: per side the seconds of every round and their median, turns per second, and the file's size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.tree_runs import alternate, run_probe, write_result  # noqa: E402

PROBE = """
import json, sys, tempfile, time
from pathlib import Path
from memstrata.bench.locomo import ingest
from memstrata.bench.locomo_data import load
from memstrata.memory import Memory
conversations = load(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "write.db"
    with Memory(store=f"sqlite:///{path}", embedder="static") as memory:
        memory.embedder.embed_documents(["warm up"])
        started = time.perf_counter()
        for conversation in conversations:
            ingest(memory, conversation)
        seconds = time.perf_counter() - started
    turns = sum(len(c.turns) for c in conversations)
    size = sum(p.stat().st_size for p in Path(tmp).iterdir())
print(json.dumps({"seconds": seconds, "turns": turns, "file_bytes": size}))
"""


def timed(tree: Path, data: str) -> dict:
    return run_probe(tree, PROBE, data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("data")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    trees = {"before": options.before, "after": options.after}
    runs = alternate(options.rounds, trees, lambda tree: timed(tree, options.data))
    summary = {
        side: {
            "median_s": round(median(r["seconds"] for r in rs), 3),
            "turns_per_s": round(rs[0]["turns"] / median(r["seconds"] for r in rs), 1),
            "file_bytes": rs[0]["file_bytes"],
        }
        for side, rs in runs.items()
    }
    summary["ratio_after_to_before"] = round(summary["after"]["median_s"] / summary["before"]["median_s"], 3)
    fields = {"runs": runs, "summary": summary}
    write_result("locomo-write-before-after", fields, "locomo_write_before_after.py", options.out)


if __name__ == "__main__":
    main()
