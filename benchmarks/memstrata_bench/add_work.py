"""Instructions per SQLite `Memory.add` of this checkout and of an older commit, counted by callgrind.

    python -m memstrata_bench.add_work --data locomo-dev.json --old 82a09d5 \\
        --out benchmarks/results/add-work-vs-82a09d5.json

A count of executed instructions does not depend on the machine's load, so it settles a comparison that
wall-clock rounds on a shared machine leave open (`ingest_before_after` times the same writes). Each tree
runs the same script under `valgrind --tool=callgrind` in a fresh interpreter: open a fresh SQLite file
with the static embedder, embed once (the embedder's tables load), then switch counting on
(`callgrind_control -i on`), add the first `--turns` turns of LoCoMo's first conversation one by one as
episodes, and switch it off. Only the adds are counted; hash randomisation is fixed (PYTHONHASHSEED=0).

Reported per tree: the instructions counted and their number per `add`, and new ÷ old (below 1: the new
code does less work per add).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .ingest_before_after import OLD_COMMIT, old_tree, write_turns
from .report import machine_info, print_result
from .selfrun import memstrata_source

PROBE = r"""
import sys
tree, turns_path, limit = sys.argv[1:]
sys.path.insert(0, tree)
import json, os, subprocess, tempfile
from datetime import datetime
import memstrata
from memstrata import Memory, Scope

conversation = json.load(open(turns_path))[0]
turns = conversation["turns"][: int(limit)]
scope = Scope(user_id=conversation["user"])
with tempfile.TemporaryDirectory() as tmp, Memory(store=f"sqlite:///{tmp}/add.db", embedder="static") as memory:
    memory.embedder.embed_documents(["warm up"])
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    for t in turns:
        memory.add(t["document"], scope=scope, kind="episode", created_at=datetime.fromisoformat(t["at"]))
    subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
print(json.dumps({"memstrata": memstrata.__file__, "adds": len(turns)}))
"""

_COLLECTED = re.compile(r"Collected : (\d+)")


def count(tree: Path, turns: Path, limit: int) -> dict[str, Any]:
    """The instructions of `limit` adds under `tree`, counted by callgrind in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={tmp}/callgrind.out",
                sys.executable,
                "-c",
                PROBE,
                str(tree),
                str(turns),
                str(limit),
            ],
            cwd="/",
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
    collected = _COLLECTED.search(done.stderr)
    if done.returncode or collected is None:
        raise SystemExit(f"callgrind under {tree} failed:\n{done.stderr[-4000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(found["memstrata"]).startswith(str(tree)):
        raise SystemExit(f"probe under {tree} imported {found['memstrata']}")
    instructions = int(collected.group(1))
    return {"instructions": instructions, "adds": found["adds"], "per_add": round(instructions / found["adds"])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="locomo-dev.json")
    parser.add_argument("--turns", type=int, default=200, help="turns added one by one")
    parser.add_argument("--old", default=OLD_COMMIT, help="the commit to compare with")
    parser.add_argument("--out", type=Path)
    options = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("add_work needs valgrind (e.g. apt-get install valgrind)")
    repo = memstrata_source()
    with old_tree(repo, options.old) as old, tempfile.TemporaryDirectory() as tmp:
        turns = Path(tmp) / "turns.json"
        write_turns(options.data, turns)
        sides = {"old": count(old, turns, options.turns), "new": count(repo, turns, options.turns)}
    revision = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    result = {
        "benchmark": "add-work",
        "old": options.old,
        "new": revision.stdout.strip(),
        "new_uncommitted": bool(
            subprocess.run(
                ["git", "-C", str(repo), "status", "--porcelain", "memstrata"], capture_output=True, text=True
            ).stdout.strip()
        ),
        **sides,
        "new_over_old": round(sides["new"]["per_add"] / sides["old"]["per_add"], 3),
        "command": "python -m memstrata_bench.add_work " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine_info(),
    }
    print_result(result, options.out)


if __name__ == "__main__":
    main()
