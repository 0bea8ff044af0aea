"""Write throughput of the PostgreSQL store on Citus against single-node PostgreSQL, in one run.

Each round writes `--writes` memories, one `save` each (the record, its ADD event, its vector: one
transaction, as `Memory.add` makes per memory), spread over 20 users, first on one backend then on the
other (the order alternates between rounds, so drifting machine load hits both alike). Reported: the
median over rounds of each backend's milliseconds per write, and Citus/single-node throughput
(single-node ms / Citus ms). Also counted on Citus: the two-phase commits (`PREPARE TRANSACTION`) the
coordinator sent during one round, from `citus.log_remote_commands`.

Each backend is measured three ways (`MODES`), in an order that alternates between rounds:

* `unfenced`: plain `store.save` calls (no unit of work), one `memstrata_save` call each;
* `fenced`: the saves made inside `fence(store, user)`, as the memory layers and the server write (the
  fences are entered before the timed loop: a unit of work reads the generation once); since migration 14
  the call checks the fence itself, so this is one call too;
* `fenced-in-transaction`: the same fenced saves the way they ran before migration 14 (the store told to
  check the fence in its own transaction: BEGIN, the lock, the generation read, the call, COMMIT; on Citus
  the call then runs on the coordinator, each statement routed to the user's worker).

Then the same comparison through the public API (`API_CALLS`), where a write is more than one store
call: `Memory.add` (one fact: the erasure fence read, the duplicate check, the save),
`Memory.add_message` (one turn of a session: the fence read, the save) and `Memory.add_many` (`MANY`
memories of one user in one save), `--writes` memories per round on one `Memory` per backend over the same
stores, the order alternating as above. Reported as memories/s and Citus/single-node throughput.

    python benchmarks/citus_writes.py [--rounds 9] [--writes 100] [--out benchmarks/results/citus-writes.json]

Needs the test services: PostgreSQL with pgvector on 5432 and the Citus cluster of scripts/citus.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # tests.support: the throwaway databases and roles of the test suite

from psycopg import sql  # noqa: E402

from memstrata import Memory  # noqa: E402
from memstrata.embedders.hashing import HashingEmbedder  # noqa: E402
from memstrata.models import EventType, Scope, new_event, new_record  # noqa: E402
from memstrata.storage.fence import fence  # noqa: E402
from memstrata.storage.postgres import PostgresStore  # noqa: E402
from tests.support.citus import citus_schema, connect_coordinator  # noqa: E402
from tests.support.pg import postgres_urls  # noqa: E402

EMBED = HashingEmbedder(64)
USERS = [f"bench-user-{n}" for n in range(20)]
BATCHES = (1, 10, 25, 100)
"""Memories per save: one (a single `Memory.add`), ten (a turn's extracted memories written together), 25
and 100 (`add_many` and `import_user` batches)."""
MODES = ("unfenced", "fenced", "fenced-in-transaction")


def timed_round(
    store: PostgresStore, mode: str, writes: int, tag: str, batch: int, users: Sequence[str] = USERS
) -> float:
    """`write_round` in `mode` (module docstring)."""
    if mode == "unfenced":
        return write_round(store, writes, tag, batch, users)
    store._fence_in_call = mode == "fenced"  # the save path of migration 14, or the one before it
    try:
        with ExitStack() as fences:
            for user in users:
                fences.enter_context(fence(store, user))
            return write_round(store, writes, tag, batch, users)
    finally:
        store._fence_in_call = True


def write_round(store: PostgresStore, writes: int, tag: str, batch: int = 1, users: Sequence[str] = USERS) -> float:
    """Milliseconds per memory over `writes` memories saved `batch` at a time (one user per save)."""
    texts = [f"{tag} note {i}: the meeting about the green tea order moved to Thursday" for i in range(writes)]
    vectors = EMBED.embed_documents(texts)
    started = time.perf_counter()
    for start in range(0, writes, batch):
        user = users[(start // batch) % len(users)]
        records = [new_record(scope=Scope(user), content=t) for t in texts[start : start + batch]]
        events = [new_event(r, EventType.ADD, after=r.content) for r in records]
        store.save(user, records, events, vectors[start : start + batch])
    return (time.perf_counter() - started) * 1000 / writes


API_CALLS = ("add", "add_message", "add_many")
"""The public API's writes measured end to end (module docstring); `add_many` in batches of `MANY`."""
MANY = 100
"""Memories per `Memory.add_many` call: a bulk load or a long conversation's turns written together."""


def api_round(memory: Memory, call: str, writes: int, tag: str) -> float:
    """Memories written per second by `writes` memories through `Memory.<call>`, spread over `USERS`
    (add_message: one session per user; add_many: `MANY` memories of one user a call)."""
    texts = [f"{tag} note {i}: the meeting about the green tea order moved to Thursday" for i in range(writes)]
    started = time.perf_counter()
    if call == "add_many":
        for start in range(0, writes, MANY):
            memory.add_many(texts[start : start + MANY], scope=Scope(USERS[(start // MANY) % len(USERS)]))
        return writes / (time.perf_counter() - started)
    for i, text in enumerate(texts):
        user = USERS[i % len(USERS)]
        if call == "add":
            memory.add(text, scope=Scope(user))
        else:
            memory.add_message("user", text, scope=Scope(user, session_id=f"{tag}-session"))
    return writes / (time.perf_counter() - started)


def users_on(schema: str, port: int) -> list[str]:
    """The `USERS` whose shards are placed on the worker listening on `port`."""
    with connect_coordinator() as admin:
        admin.execute(sql.SQL("SET search_path = {}, public").format(sql.Identifier(schema)))
        rows = admin.execute(
            "SELECT u FROM unnest(%s::text[]) u JOIN pg_dist_shard_placement p"
            " ON p.shardid = get_shard_id_for_distribution_column('memories', u) WHERE p.nodeport = %s",
            (USERS, port),
        ).fetchall()
    return [row[0] for row in rows]


def two_phase_commits(app_url: str, owner_url: str, app_role: str, writes: int) -> int:
    """PREPARE TRANSACTIONs the coordinator sends for `writes` saves: a store of one pooled connection,
    opened after `citus.log_remote_commands` was set for the application role, whose notices are counted."""
    with connect_coordinator() as admin:
        for setting in ("citus.log_remote_commands = on", "client_min_messages = log"):
            admin.execute(sql.SQL("ALTER ROLE {} SET " + setting).format(sql.Identifier(app_role)))
    seen: list[str] = []
    with PostgresStore.open(app_url, owner_url=owner_url, pool_size=1) as store:
        with store._pool.connection() as conn:
            conn.add_notice_handler(lambda d: seen.append(d.message_primary or ""))
        write_round(store, writes, "counted")
    with connect_coordinator() as admin:
        admin.execute(sql.SQL("ALTER ROLE {} RESET ALL").format(sql.Identifier(app_role)))
    return sum("PREPARE TRANSACTION" in m for m in seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "citus-writes.json")
    args = parser.parse_args()
    with ExitStack() as stack:
        app_url, owner_url = stack.enter_context(postgres_urls())
        citus = stack.enter_context(citus_schema(shard_count=32))
        stores = {
            "single-node": stack.enter_context(PostgresStore.open(app_url, owner_url=owner_url, pool_size=1)),
            "citus": stack.enter_context(PostgresStore.open(citus.app_url, owner_url=citus.owner_url, pool_size=1)),
        }
        for store in stores.values():
            store.bind_embedder("hashing-64", 64)
            write_round(store, 20, "warm-up")
        prepared = two_phase_commits(citus.app_url, citus.owner_url, citus.app_role, 20)
        per_write: dict[str, list[float]] = {
            _key(name, mode, b): [] for mode in MODES for b in BATCHES for name in stores
        }
        for round_ in range(args.rounds):
            order = list(stores) if round_ % 2 == 0 else list(reversed(stores))
            modes = MODES[round_ % len(MODES) :] + MODES[: round_ % len(MODES)]
            for batch in BATCHES:
                for mode in modes:
                    for name in order:
                        per_write[_key(name, mode, batch)].append(
                            timed_round(stores[name], mode, args.writes, f"r{round_}b{batch}{mode}", batch)
                        )
        # Where a delegated save's time goes: the same fenced one-memory saves of the users placed on the
        # first worker, sent to the coordinator (which delegates them) and straight to that worker (which
        # holds the users' shards and runs the call there: no coordinator, no hop).
        host, port = citus.workers[0]
        local_users = users_on(citus.schema, port)
        direct = {
            **stores,
            "citus-worker": stack.enter_context(
                PostgresStore.open(
                    citus.url_on(host, port, role=citus.app_role),
                    owner_url=citus.owner_url.replace(":5440/", f":{port}/"),
                    pool_size=1,
                )
            ),
        }
        direct["citus-worker"].bind_embedder("hashing-64", 64)
        per_save: dict[str, list[float]] = {name: [] for name in direct}
        for round_ in range(args.rounds):
            names = list(direct) if round_ % 2 == 0 else list(reversed(direct))
            for name in names:
                per_save[name].append(timed_round(direct[name], "fenced", args.writes, f"r{round_}d", 1, local_users))
        memories = {name: stack.enter_context(Memory(store=store, embedder=EMBED)) for name, store in stores.items()}
        per_call: dict[str, list[float]] = {f"{name} {call}": [] for call in API_CALLS for name in stores}
        for memory in memories.values():
            for call in API_CALLS:
                api_round(memory, call, 20, f"warm-up-{call}")
        for round_ in range(args.rounds):
            order = list(stores) if round_ % 2 == 0 else list(reversed(stores))
            for call in API_CALLS:
                for name in order:
                    per_call[f"{name} {call}"].append(api_round(memories[name], call, args.writes, f"r{round_}{call}"))
    medians = {name: statistics.median(values) for name, values in per_write.items()}
    call_medians = {name: statistics.median(values) for name, values in per_call.items()}
    result = {
        "what": "ms per memory saved (record + ADD event + vector; `batch` memories of one user per save, "
        "one transaction), median over rounds; modes: unfenced, fenced (the fence checked in the save call, "
        "migration 14), fenced-in-transaction (checked in the store's transaction, as before migration 14)",
        "rounds": args.rounds,
        "writes_per_round": args.writes,
        "median_ms_per_write": {k: round(v, 3) for k, v in medians.items()},
        "ms_per_write_by_round": {k: [round(v, 3) for v in vs] for k, vs in per_write.items()},
        "citus_over_single_node_throughput": {
            f"{mode} batch {b}": round(medians[_key("single-node", mode, b)] / medians[_key("citus", mode, b)], 3)
            for mode in MODES
            for b in BATCHES
        },
        "fenced_in_call_over_in_transaction_throughput": {
            f"{name} batch {b}": round(
                medians[_key(name, "fenced-in-transaction", b)] / medians[_key(name, "fenced", b)], 3
            )
            for name in ("single-node", "citus")
            for b in BATCHES
        },
        "fenced_save_ms_by_entry_point": {k: round(statistics.median(v), 3) for k, v in per_save.items()},
        "fenced_save_ms_by_entry_point_note": "one-memory fenced saves of the users on the first worker, "
        "sent to single-node PostgreSQL, to the Citus coordinator, and straight to that worker",
        "api_memories_per_s": {k: round(v, 1) for k, v in call_medians.items()},
        "api_memories_per_s_by_round": {k: [round(v, 1) for v in vs] for k, vs in per_call.items()},
        "api_citus_over_single_node_throughput": {
            call: round(call_medians[f"citus {call}"] / call_medians[f"single-node {call}"], 3) for call in API_CALLS
        },
        "citus_prepare_transactions_per_20_writes": prepared,
        "citus": "coordinator + 2 workers on one machine (scripts/citus.sh), 32 shards",
        "commit": _git("rev-parse", "--short", "HEAD"),
        "load_average": os.getloadavg(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


def _key(backend: str, mode: str, batch: int) -> str:
    return f"{backend} {mode} batch {batch}"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
