"""Write throughput and context latency of this checkout against commit 82a09d5 (the last commit before
per-user BM25 keyword statistics), alternating, in one run, on LoCoMo's turns.

    python -m memstrata_bench.ingest_before_after --data locomo-dev.json --rounds 5 \\
        --out benchmarks/results/ingest-vs-82a09d5.json

The old commit is checked out into a temporary git worktree (`git worktree add --detach`), removed at the
end. Each measurement runs in a fresh interpreter that puts one tree first on `sys.path` and imports that
tree's `memstrata` (the probe prints the file it imported), calling only the public API both trees share.
Each round measures old and new once, the order swapped every round, so neither side always runs on the
machine the other just warmed. Per round and side:

* SQLite `add_many`: every turn of the five conversations, each with its two previous turns as context
  (as `memstrata-bench locomo` ingests them), batches of 256, into a fresh file: turns/s.
* SQLite `add`, one call per turn (episodes: a plain write, no reconciliation): turns/s.
* SQLite `add_message`, one call per turn, sessions as in LoCoMo: messages/s.
* PostgreSQL `add_message` (a throwaway database per side and round): messages/s; then `context` for the
  conversation's questions (max_tokens 1,000): p50/p95 ms.

`--only-postgres` skips the SQLite figures (cheaper rounds when only the PostgreSQL store changed).
`postgres_current_memories`: how many of the user's memories were current when `context` ran. 82a09d5
compressed turns older than 30 days by their dates inside `add_message` (every 20 turns), so its `context`
searched about two dozen current memories; later commits queue that upkeep and judge age by when a memory
was recorded, so the new side's `context` searches all 300 turns.

Reported: every round, per side the median of each figure, and new ÷ old of the medians (throughput
ratios ≥ 1 mean the new code writes faster; latency ratios ≤ 1 mean it answers faster).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from statistics import median
from typing import Any

from .latency import throwaway_postgres
from .locomo_data import load
from .report import machine_info, print_result
from .selfrun import memstrata_source

OLD_COMMIT = "82a09d5"

PROBE = r"""
import sys
tree, kind, turns_path, *urls = sys.argv[1:]
sys.path.insert(0, tree)
import inspect, json, statistics, tempfile, time
from datetime import datetime
import memstrata
from memstrata import Memory, MemoryKind, NewMemory, Scope
from memstrata.core.retrieval import context_text

data = json.load(open(turns_path))
OLD_API = list(inspect.signature(Memory.add_message).parameters)[1] == "scope"


def add_message(memory, scope, turn):
    at = datetime.fromisoformat(turn["at"])
    if OLD_API:
        return memory.add_message(scope, "user", turn["text"], at=at, speaker=turn["speaker"])
    return memory.add_message("user", turn["text"], scope=scope, at=at, speaker=turn["speaker"])


def context(memory, scope, question):
    if OLD_API:
        return memory.context(scope, question, max_tokens=1000)
    return memory.context(question, max_tokens=1000, scope=scope)


def session(conversation, turn):
    return Scope(user_id=conversation["user"], session_id=f"session-{turn['session']}")


result = {"memstrata": memstrata.__file__}
if kind == "sqlite":
    limit = int(urls[0])
    with tempfile.TemporaryDirectory() as tmp:
        with Memory(store=f"sqlite:///{tmp}/many.db", embedder="static") as memory:
            memory.embedder.embed_documents(["warm up"])
            started, count = time.perf_counter(), 0
            for conversation in data:
                items = [
                    NewMemory(content=t["document"], kind=MemoryKind.EPISODE, metadata={"speaker": t["speaker"]},
                              source_ids=(t["dia_id"],), created_at=datetime.fromisoformat(t["at"]),
                              context=context_text(t["previous"]))
                    for t in conversation["turns"]
                ]
                for start in range(0, len(items), 256):
                    memory.add_many(items[start : start + 256], scope=Scope(user_id=conversation["user"]), dedupe=False)
                count += len(items)
            result["sqlite_add_many_per_s"] = count / (time.perf_counter() - started)
        with Memory(store=f"sqlite:///{tmp}/add.db", embedder="static") as memory:
            memory.embedder.embed_documents(["warm up"])
            conversation = data[0]
            turns = conversation["turns"][:limit]
            started = time.perf_counter()
            for t in turns:
                memory.add(t["document"], scope=Scope(user_id=conversation["user"]), kind="episode",
                           created_at=datetime.fromisoformat(t["at"]))
            result["sqlite_add_per_s"] = len(turns) / (time.perf_counter() - started)
        with Memory(store=f"sqlite:///{tmp}/messages.db", embedder="static") as memory:
            memory.embedder.embed_documents(["warm up"])
            started = time.perf_counter()
            for t in turns:
                add_message(memory, session(conversation, t), t)
            result["sqlite_add_message_per_s"] = len(turns) / (time.perf_counter() - started)
else:
    from memstrata.storage.base import MemoryFilter
    from memstrata.storage.postgres import PostgresStore
    app, owner, limit, questions = urls[0], urls[1], int(urls[2]), json.loads(urls[3])
    with Memory(store=PostgresStore.open(app, owner_url=owner), embedder="static") as memory:
        memory.embedder.embed_documents(["warm up"])
        conversation = data[0]
        turns = conversation["turns"][:limit]
        started = time.perf_counter()
        for t in turns:
            add_message(memory, session(conversation, t), t)
        result["postgres_add_message_per_s"] = len(turns) / (time.perf_counter() - started)
        current = memory.store.list_memories(conversation["user"], MemoryFilter(), limit=10_000)
        result["postgres_current_memories"] = len(current)
        scope = session(conversation, turns[-1])
        context(memory, scope, questions[0])
        took = []
        for question in questions:
            started = time.perf_counter()
            context(memory, scope, question)
            took.append((time.perf_counter() - started) * 1000)
        took.sort()
        result["postgres_context_p50_ms"] = statistics.median(took)
        result["postgres_context_p95_ms"] = took[min(len(took) - 1, round(0.95 * (len(took) - 1)))]
print(json.dumps(result))
"""

THROUGHPUTS = ("sqlite_add_many_per_s", "sqlite_add_per_s", "sqlite_add_message_per_s", "postgres_add_message_per_s")
LATENCIES = ("postgres_context_p50_ms", "postgres_context_p95_ms")
STATES = ("postgres_current_memories",)


@contextlib.contextmanager
def old_tree(repo: Path, commit: str) -> Iterator[Path]:
    """A detached worktree of `commit` of the repository at `repo`, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="memstrata-old-") as parent:
        path = Path(parent) / "tree"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(path), commit], check=True)
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)], check=False)


def write_turns(data: str, path: Path) -> list[str]:
    """LoCoMo's turns as the probe reads them (a JSON file); returns the first conversation's questions."""
    conversations = load(data)
    out = []
    for conversation in conversations:
        turns = [
            {
                "document": turn.document,
                "text": turn.text,
                "speaker": turn.speaker,
                "dia_id": turn.dia_id,
                "session": turn.session,
                "at": turn.at.isoformat(),
                "previous": [t.document for t in conversation.turns[max(0, i - turn.index) : i]],
            }
            for i, turn in enumerate(conversation.turns)
        ]
        out.append({"user": f"locomo-{conversation.sample_id}", "turns": turns})
    path.write_text(json.dumps(out))
    return [q.question for q in conversations[0].questions]


def probe(tree: Path, kind: str, turns: Path, *args: str) -> dict[str, Any]:
    """One measurement under `tree` in a fresh interpreter (last line of its output: a JSON object)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree), kind, str(turns), *args], cwd="/", capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"probe under {tree} failed:\n{done.stderr}")
    found = dict(json.loads(done.stdout.strip().splitlines()[-1]))
    if not str(found["memstrata"]).startswith(str(tree)):
        raise SystemExit(f"probe under {tree} imported {found['memstrata']}")
    return found


def measure(tree: Path, turns: Path, options: argparse.Namespace, questions: list[str]) -> dict[str, Any]:
    result = {} if options.only_postgres else probe(tree, "sqlite", turns, str(options.turns))
    if not options.no_postgres:
        with throwaway_postgres() as (app, owner):
            chosen = json.dumps(questions[: options.questions])
            result |= probe(tree, "postgres", turns, app, owner, str(options.postgres_turns), chosen)
    result["memstrata"] = str(result["memstrata"])
    return result


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per side the median of each figure; new ÷ old of the medians."""
    sides = {
        side: {k: round(median(r[k] for r in rows), 2) for k in (*THROUGHPUTS, *LATENCIES, *STATES) if k in rows[0]}
        for side, rows in runs.items()
    }
    ratios = {k: round(sides["new"][k] / sides["old"][k], 3) for k in sides["old"] if k not in STATES}
    return {"old": sides["old"], "new": sides["new"], "new_over_old": ratios}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="locomo-dev.json")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=400, help="turns written one by one on SQLite")
    parser.add_argument("--postgres-turns", type=int, default=300, help="messages written on PostgreSQL")
    parser.add_argument("--questions", type=int, default=100, help="context calls on PostgreSQL")
    parser.add_argument("--old", default=OLD_COMMIT, help="the commit to compare with")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--only-postgres", action="store_true", help="measure the PostgreSQL figures only")
    parser.add_argument("--out", type=Path)
    options = parser.parse_args(argv)
    if options.only_postgres and options.no_postgres:
        parser.error("--only-postgres and --no-postgres exclude each other")
    repo = memstrata_source()
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with old_tree(repo, options.old) as old, tempfile.TemporaryDirectory() as tmp:
        turns = Path(tmp) / "turns.json"
        questions = write_turns(options.data, turns)
        trees = {"old": old, "new": repo}
        for number in range(options.rounds):
            for side in ("old", "new") if number % 2 == 0 else ("new", "old"):
                runs[side].append(measure(trees[side], turns, options, questions))
                print(side, json.dumps(runs[side][-1]), file=sys.stderr)
    revision = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    result = {
        "benchmark": "ingest-before-after",
        "old": options.old,
        "new": revision.stdout.strip(),
        "summary": summarize(runs),
        "runs": runs,
        "command": "python -m memstrata_bench.ingest_before_after " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine_info(),
    }
    print_result(result, options.out)


if __name__ == "__main__":
    main()
