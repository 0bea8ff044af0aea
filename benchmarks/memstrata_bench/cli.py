"""`memstrata-bench locomo | ...`: reproducible benchmarks, JSON on stdout and in result files.

The command line of the benchmark harness. Every data set is read from a path given on the command
line; results go to stdout and, with `--out`, to a JSON file per benchmark."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memstrata import BackendError, InvalidInput, MemstrataError, NotFound, Strategy, UsageError

from .report import comma_list

PROG = "memstrata-bench"

EXIT_CODES: tuple[tuple[type[MemstrataError], int], ...] = (
    (NotFound, 3),
    (UsageError, 2),
    (BackendError, 4),
    (MemstrataError, 1),
)
"""Exit codes of memstrata's own command line, for the same errors (first match wins)."""

GLOBAL_OPTIONS = {
    "--store": "store: sqlite (temporary file, default), postgres (throwaway database), citus or a store URL",
    "--embedder": "embedder spec (default: $MEMSTRATA_EMBEDDER or 'static')",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.handler(args)
        sys.stdout.flush()
    except MemstrataError as exc:
        code = next(c for kind, c in EXIT_CODES if isinstance(exc, kind))
        print(f"error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    return int(code or 0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="memstrata's benchmarks: JSON on stdout and in files.")
    _add_global_options(parser)
    kinds = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    register(kinds)
    for leaf in _leaf_parsers(parser):
        # SUPPRESS: given after the benchmark's name it wins; not given, the value before it stays.
        _add_global_options(leaf, default=argparse.SUPPRESS)
    return parser


def _add_global_options(parser: argparse.ArgumentParser, *, default: object = None) -> None:
    for option, text in GLOBAL_OPTIONS.items():
        if option not in parser._option_string_actions:
            parser.add_argument(option, default=default, help=text)


def _leaf_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        yield parser
    for action in subcommands:
        for child in dict.fromkeys(action.choices.values()):
            yield from _leaf_parsers(child)


def register(kinds: Any) -> None:
    """Every benchmark as a subcommand of `kinds`."""

    locomo = kinds.add_parser("locomo", help="LoCoMo evidence recall@k and search latency")
    locomo.add_argument("--data", required=True, help="path to a locomo10.json-format file")
    locomo.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        help="sqlite (temporary file, default), postgres (throwaway database), citus (throwaway schema on Citus) "
        "or a store URL",
    )
    locomo.add_argument("--strategy", default=Strategy.HYBRID.value, choices=[s.value for s in Strategy])
    locomo.add_argument("--k", default="1,5,10,20", help="comma-separated cut-offs")
    locomo.add_argument(
        "--mode",
        default="turns",
        choices=["turns", "extracted", "both"],
        help="store every turn, only extracted memories, or both",
    )
    locomo.add_argument("--out", help="also write the result JSON to this directory")
    locomo.add_argument("--name", help="result file name (default: locomo-<strategy>)")
    locomo.add_argument("--json", action="store_true", help="print only the JSON object")
    locomo.set_defaults(handler=cmd_locomo)

    persona = kinds.add_parser("persona", help="advice questions on LongMemEval haystacks: required turns in context()")
    persona.add_argument("--data", required=True, help="LongMemEval JSON (longmemeval_s format, .gz allowed)")
    persona.add_argument("--labels", help="label file (default: benchmarks/persona/labels.json)")
    persona.add_argument("--budgets", default="1000,2000", help="comma-separated context budgets")
    persona.add_argument("--out", help="also write the result JSON to this directory")
    persona.add_argument("--name", default="persona", help="result file name")
    persona.add_argument("--json", action="store_true", help="print only the JSON object")
    persona.set_defaults(handler=cmd_persona)

    lme = kinds.add_parser("longmemeval", help="LongMemEval session/turn recall and search latency")
    lme.add_argument("--data", required=True, help="path to a LongMemEval JSON file (.json or .json.gz)")
    lme.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        help="sqlite (temporary file, default), postgres (throwaway database) or a store URL",
    )
    lme.add_argument("--strategy", default=Strategy.HYBRID.value, choices=[s.value for s in Strategy])
    lme.add_argument(
        "--granularity",
        default="turn",
        choices=["turn", "session"],
        help="store every turn (default) or every session as one memory",
    )
    lme.add_argument("--limit", type=int, help="use only the first N scored questions")
    lme.add_argument("--out", help="also write the result JSON to this directory")
    lme.add_argument("--name", help="result file name (default: longmemeval-<granularity>)")
    lme.add_argument("--json", action="store_true", help="print only the JSON object")
    lme.set_defaults(handler=cmd_longmemeval)

    parity = kinds.add_parser("parity", help="PostgreSQL vs SQLite: recall@10 and top-10 agreement, same data")
    parity.add_argument("--data", required=True, help="LoCoMo JSON (locomo10.json format)")
    parity.add_argument("--longmemeval", help="also LongMemEval JSON(.gz) haystacks")
    parity.add_argument("--limit", type=int, default=30, help="LongMemEval questions (default 30)")
    parity.add_argument("--out", help="also write the result JSON to this directory")
    parity.add_argument("--name", default="postgres-parity", help="result file name (default: postgres-parity)")
    parity.add_argument("--json", action="store_true", help="print only the JSON object")
    parity.set_defaults(handler=cmd_parity)

    bulkload = kinds.add_parser("bulkload", help="PostgreSQL search right after a bulk load vs steady state")
    bulkload.add_argument("--memories", type=int, default=20_000, help="memories loaded for one user (default 20000)")
    bulkload.add_argument("--existing", type=int, default=2_000, help="memories already there (default 2000)")
    bulkload.add_argument("--queries", type=int, default=200, help="timed searches (default 200)")
    bulkload.add_argument("--no-auto-analyze", action="store_true", help="the store gathers no statistics itself")
    bulkload.add_argument("--out", help="also write the result JSON to this directory")
    bulkload.add_argument("--name", help="result file name (default: postgres-bulkload[-no-auto-analyze])")
    bulkload.add_argument("--json", action="store_true", help="print only the JSON object")
    bulkload.set_defaults(handler=cmd_bulkload)

    heldout = kinds.add_parser("heldout", help="held-out estimates of the ranking settings (LoCoMo, LongMemEval)")
    heldout.add_argument("--locomo", help="LoCoMo file: leave-one-conversation-out recall@10")
    heldout.add_argument(
        "--longmemeval",
        help="LongMemEval file: leave-one-question-out, split-half and leave-one-type-out turn recall@10",
    )
    heldout.add_argument(
        "--store", default=argparse.SUPPRESS, help="sqlite (temporary file, default), postgres or a URL"
    )
    heldout.add_argument("--out", help="also write the result JSON (heldout.json) to this directory")
    heldout.add_argument("--json", action="store_true", help="print only the JSON object")
    heldout.set_defaults(handler=cmd_heldout)

    extraction = kinds.add_parser(
        "extraction",
        help="the offline extractor on a labelled set, and on LongMemEval / LoCoMo (text nobody here wrote)",
    )
    extraction.add_argument("--data", help="labelled JSONL (default: benchmarks/extraction/labelled.jsonl)")
    extraction.add_argument("--longmemeval", help="LongMemEval JSON(.gz): answer recall from the evidence user turns")
    extraction.add_argument("--locomo", help="LoCoMo JSON with event_summary: coverage of the summary facts")
    extraction.add_argument("--judgments", help="directory of judgments-<set>.jsonl (default: benchmarks/extraction)")
    extraction.add_argument("--sample", type=int, default=60, help="memories per set in the judged sample (default 60)")
    extraction.add_argument("--show-unjudged", action="store_true", help="keep the unjudged memories in the output")
    # with both --longmemeval and --locomo, the hand-labelled realistic-chat turns drawn from them are scored too
    extraction.add_argument("--name", default="extraction", help="result file name (default: extraction)")
    extraction.add_argument("--out", help="also write the result JSON to this directory")
    extraction.add_argument("--json", action="store_true", help="print only the JSON object")
    extraction.set_defaults(handler=cmd_extraction)

    learn = kinds.add_parser("learn", help="latency of learn() (offline extraction + resolution) per message")
    learn.add_argument("--memories", type=int, default=10_000, help="memories stored before timing (default 10k)")
    learn.add_argument("--messages", type=int, default=300, help="messages timed (default 300)")
    learn.add_argument("--out", help="also write the result JSON to this directory")
    learn.add_argument("--json", action="store_true", help="print only the JSON object")
    learn.set_defaults(handler=cmd_learn)

    encryption = kinds.add_parser(
        "encryption", help="encrypted vs plain store (SQLite: SQLCipher; postgres: crypto-shredding), in one run"
    )
    encryption.add_argument(
        "--store", choices=("sqlite", "postgres"), default="sqlite", help="which store (default sqlite)"
    )
    encryption.add_argument("--data", help="LoCoMo file: check recall@k is identical on both stores")
    encryption.add_argument("--memories", type=int, default=10_000, help="memories per latency run (default 10k)")
    encryption.add_argument("--queries", type=int, default=200, help="search queries per run (default 200)")
    encryption.add_argument("--rounds", type=int, default=2, help="latency runs per store, alternating (default 2)")
    encryption.add_argument(
        "--out", default="benchmarks/results", help="result directory (encryption.json, encryption-postgres.json)"
    )
    encryption.set_defaults(handler=cmd_encryption)

    _register_scale(kinds)


def _ks(raw: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in raw.split(",") if k.strip()})
    except ValueError:
        raise InvalidInput(f"--k must be comma-separated integers, got {raw!r}") from None
    if not ks or ks[0] < 1:
        raise InvalidInput("--k values must be >= 1")
    return ks


def cmd_locomo(args: argparse.Namespace) -> int:
    from . import locomo
    from .report import write_result

    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    result = locomo.run(
        args.data,
        store=getattr(args, "store", None),
        embedder=args.embedder,
        strategy=args.strategy,
        ks=_ks(args.k),
        mode=args.mode,
        progress=progress,
    )
    store = getattr(args, "store", None)
    result["command"] = (
        f"memstrata-bench locomo --data {Path(args.data).name} --strategy {args.strategy} --mode {args.mode}"
        + (f" --store {store if store in ('sqlite', 'postgres', 'citus') else 'URL'}" if store else "")
    )
    if args.out:
        default_name = f"locomo-{args.strategy}" + ("" if args.mode == "turns" else f"-{args.mode}")
        write_result(args.out, args.name or default_name, result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_persona(args: argparse.Namespace) -> int:
    from . import persona
    from .report import write_result

    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    labels = args.labels or persona.LABELS
    result = persona.run(args.data, labels=labels, budgets=_ks(args.budgets), embedder=args.embedder, progress=progress)
    result["command"] = f"memstrata-bench persona --data {Path(args.data).name} --budgets {args.budgets}"
    if args.out:
        write_result(args.out, args.name, result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_encryption(args: argparse.Namespace) -> int:
    from . import encryption
    from .report import write_result

    if args.rounds < 1 or args.memories < 1:
        raise InvalidInput("--rounds and --memories must be at least 1")
    args.store = getattr(args, "store", None) or "sqlite"
    result = encryption.run(
        args.data,
        memories=args.memories,
        queries=args.queries,
        rounds=args.rounds,
        embedder=args.embedder,
        store=args.store,
    )
    result["command"] = (
        f"memstrata-bench encryption --store {args.store} --memories {args.memories} --queries {args.queries} "
        f"--rounds {args.rounds}" + (f" --data {Path(args.data).name}" if args.data else "")
    )
    write_result(args.out, "encryption" if args.store == "sqlite" else f"encryption-{args.store}", result)
    print(json.dumps(result, indent=2))
    return 0


def cmd_longmemeval(args: argparse.Namespace) -> int:
    from . import longmemeval
    from .report import write_result

    if args.limit is not None and args.limit < 1:
        raise InvalidInput(f"--limit must be >= 1, got {args.limit}")
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    store = getattr(args, "store", None)
    result = longmemeval.run(
        args.data,
        store=store,
        embedder=args.embedder,
        strategy=args.strategy,
        granularity=args.granularity,
        limit=args.limit,
        progress=progress,
    )
    result["command"] = (
        f"memstrata-bench longmemeval --data {Path(args.data).name} --granularity {args.granularity}"
        + (f" --strategy {args.strategy}" if args.strategy != Strategy.HYBRID.value else "")
        + (f" --limit {args.limit}" if args.limit else "")
        + (f" --store {store if store in ('sqlite', 'postgres') else 'URL'}" if store else "")
    )
    if args.out:
        write_result(args.out, args.name or f"longmemeval-{args.granularity}", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_parity(args: argparse.Namespace) -> int:
    from . import postgres_parity

    if args.limit < 1:
        raise InvalidInput(f"--limit must be >= 1, got {args.limit}")
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    result = postgres_parity.run_parity(
        args.data,
        longmemeval_data=args.longmemeval,
        limit=args.limit,
        embedder=args.embedder or "static",
        progress=progress,
    )
    result["command"] = f"memstrata-bench parity --data {Path(args.data).name}" + (
        f" --longmemeval {Path(args.longmemeval).name} --limit {args.limit}" if args.longmemeval else ""
    )
    postgres_parity.write(result, args.out, args.name)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_bulkload(args: argparse.Namespace) -> int:
    from . import postgres_parity

    if min(args.memories, args.existing, args.queries) < 20:
        raise InvalidInput("--memories, --existing and --queries must each be at least 20")
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    result = postgres_parity.run_bulkload(
        memories=args.memories,
        existing=args.existing,
        queries=args.queries,
        auto_analyze=not args.no_auto_analyze,
        embedder=args.embedder or "static",
        progress=progress,
    )
    result["command"] = f"memstrata-bench bulkload --memories {args.memories} --existing {args.existing}" + (
        " --no-auto-analyze" if args.no_auto_analyze else ""
    )
    name = args.name or ("postgres-bulkload-no-auto-analyze" if args.no_auto_analyze else "postgres-bulkload")
    postgres_parity.write(result, args.out, name)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_heldout(args: argparse.Namespace) -> int:
    from . import heldout
    from .report import write_result

    if not args.locomo and not args.longmemeval:
        raise InvalidInput("give --locomo FILE, --longmemeval FILE or both")
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    store = getattr(args, "store", None)
    result = heldout.run(
        locomo_data=args.locomo,
        longmemeval_data=args.longmemeval,
        store=store,
        embedder=args.embedder,
        progress=progress,
    )
    result["command"] = "memstrata-bench heldout" + "".join(
        f" --{name} {Path(path).name}"
        for name, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval))
        if path
    )
    if args.out:
        write_result(args.out, "heldout", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_learn(args: argparse.Namespace) -> int:
    from . import learn
    from .report import write_result

    result = learn.run(memories=args.memories, messages=args.messages, store=args.store)
    if args.out:
        write_result(args.out, f"learn-{args.memories}", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_extraction(args: argparse.Namespace) -> int:
    from . import extraction
    from .report import write_result

    result = extraction.main_json(args.data) if args.data else extraction.main_json()
    if args.longmemeval or args.locomo:
        result["others"] = _others(args)
    if args.longmemeval and args.locomo and extraction_realistic_labels(args).is_file():
        from . import extraction_realistic

        result["realistic_others"], _ = extraction_realistic.evaluate(
            args.locomo,
            args.longmemeval,
            labels_dir=args.judgments or extraction_realistic.LABELS_DIR,
            show_unjudged=args.show_unjudged,
        )
    if args.out:
        write_result(args.out, args.name, result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def extraction_realistic_labels(args: argparse.Namespace) -> Path:
    """The labels of the realistic-chat set (turns of LoCoMo and LongMemEval, labelled by hand)."""
    from . import extraction_realistic

    folder = Path(args.judgments) if args.judgments else extraction_realistic.LABELS_DIR
    return folder / f"{extraction_realistic.NAME}-labels.jsonl"


def _others(args: argparse.Namespace) -> dict[str, Any]:
    """Recall and judged precision on LongMemEval / LoCoMo, unjudged memories dropped unless asked for."""
    from . import extraction_external

    if args.sample < 1:
        raise InvalidInput("--sample must be >= 1")
    found = extraction_external.run(
        longmemeval=args.longmemeval,
        locomo=args.locomo,
        judgments_dir=args.judgments or extraction_external.JUDGMENTS_DIR,
        sample=args.sample,
    )
    for scores in found.values():
        judged = scores["judged"]
        judged["unjudged_count"] = len(judged["unjudged"])
        if not args.show_unjudged:
            del judged["unjudged"]
    return found


# -- latency, scale, peers, plots, all ---------------------------------------------------------------
DEFAULT_RESULTS = "benchmarks/results"


def _register_scale(kinds: Any) -> None:
    latency = kinds.add_parser("latency", help="add throughput and search/context latency at one size")
    latency.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        help="sqlite (temporary file, default), postgres (throwaway database), citus (throwaway schema on Citus) "
        "or a store URL",
    )
    latency.add_argument("--memories", type=int, required=True, help="memories to load")
    latency.add_argument("--users", type=int, default=1, help="users to spread them over (default 1)")
    latency.add_argument("--queries", type=int, default=200, help="sampled search queries (default 200)")
    latency.add_argument("--context-queries", type=int, default=50, help="context() calls timed (default 50)")
    latency.add_argument("--k", type=int, default=10)
    latency.add_argument("--seed", type=int, default=7)
    latency.add_argument(
        "--no-defer-index",
        action="store_true",
        help="keep Postgres' HNSW index during the bulk load (default: rebuild it after)",
    )
    latency.add_argument(
        "--posting-budget",
        type=int,
        default=None,
        help="SQLite: keyword postings ranked per search of a big store "
        "(default: the store's max(4000, 4%% of rows); 0 = no limit)",
    )
    latency.add_argument(
        "--busy-cores",
        type=int,
        default=0,
        help="keep this many CPU cores busy while search and context are timed (default 0: a quiet run)",
    )
    latency.add_argument("--out", help="also write the result JSON to this directory")
    latency.add_argument("--name", help="result file name (default: latency-<store>-<memories>-<users>)")
    latency.add_argument("--progress", action="store_true", help="progress bar on stderr even with --json")
    latency.add_argument("--json", action="store_true", help="print only the JSON object, on one line")
    latency.set_defaults(handler=cmd_latency)

    scale = kinds.add_parser("scale", help="latency curves: sizes x layouts x stores (runs `bench latency`)")
    scale.add_argument("--out", default=DEFAULT_RESULTS, help=f"result directory (default {DEFAULT_RESULTS})")
    scale.add_argument("--name", default="scale", help="result file name (default scale)")
    scale.add_argument("--stores", default="sqlite,postgres")
    scale.add_argument("--layouts", default="one_user,many_users")
    scale.add_argument("--sizes", default="1000,10000,100000,1000000")
    scale.add_argument("--max-memories", type=int, help="skip sizes above this")
    scale.add_argument("--queries", type=int, default=200)
    scale.add_argument("--context-queries", type=int, default=50)
    scale.add_argument("--timeout", type=float, help="seconds allowed per point")
    scale.add_argument("--resume", action="store_true", help="keep finished points of an earlier run")
    scale.add_argument("--json", action="store_true", help="print only the JSON object")
    scale.set_defaults(handler=cmd_scale)

    peers = kinds.add_parser("peers", help="memstrata vs LangGraph stores, mem0, BM25 on LoCoMo, same run")
    peers.add_argument("--data", required=True, help="path to a locomo10.json-format (or LongMemEval) file")
    peers.add_argument(
        "--benchmark", default="locomo", choices=["locomo", "longmemeval"], help="the data's benchmark (default locomo)"
    )
    peers.add_argument("--peers", help="comma-separated subset (default: all)")
    peers.add_argument(
        "--conversations", "--limit", type=int, help="use only the first N conversations (LongMemEval: questions)"
    )
    peers.add_argument("--k", default="1,5,10,20", help="comma-separated cut-offs")
    peers.add_argument("--out", help="also write the result JSON to this directory")
    peers.add_argument("--json", action="store_true", help="print only the JSON object")
    peers.set_defaults(handler=cmd_peers)

    plots = kinds.add_parser("plots", help="PNG charts from scale.json and peers.json")
    plots.add_argument("--results", default=DEFAULT_RESULTS)
    plots.add_argument("--out", default="benchmarks/plots")
    plots.set_defaults(handler=cmd_plots)

    tables = kinds.add_parser("tables", help="Markdown tables of scale.json and peers.json (for BENCHMARKS.md)")
    tables.add_argument("--results", default=DEFAULT_RESULTS)
    tables.set_defaults(handler=cmd_tables)

    every = kinds.add_parser("all", help="every benchmark of BENCHMARKS.md, one result file each")
    every.add_argument("--data", help="LoCoMo file (locomo and peers steps are skipped without it)")
    every.add_argument("--longmemeval", help="LongMemEval file (its steps are skipped without it)")
    every.add_argument("--out", default=DEFAULT_RESULTS)
    every.add_argument("--quick", action="store_true", help="smoke sizes (1k memories, 2 conversations)")
    every.add_argument("--max-memories", type=int, help="cap the scale curves (default: up to 1M)")
    every.add_argument("--stores", default="sqlite,postgres", help="stores of the scale curves")
    every.add_argument("--resume", action="store_true", help="keep the scale points of an earlier run")
    every.add_argument("--skip", default="", help="comma-separated step names to leave out")
    every.set_defaults(handler=cmd_all)


def _ints(raw: str, option: str) -> list[int]:
    try:
        return [int(part) for part in comma_list(raw)]
    except ValueError:
        raise InvalidInput(f"{option} must be comma-separated integers, got {raw!r}") from None


def cmd_latency(args: argparse.Namespace) -> int:
    from . import latency
    from .report import write_result

    config = latency.LatencyConfig(
        memories=args.memories,
        users=args.users,
        queries=args.queries,
        context_queries=args.context_queries,
        k=args.k,
        seed=args.seed,
        defer_index=not args.no_defer_index,
        posting_budget=_posting_budget(args),
        busy_cores=args.busy_cores,
    )
    latency.exit_on_sigterm()
    bar = latency.ProgressBar(f"latency {args.memories:,}/{args.users:,}") if args.progress or not args.json else None
    result = latency.run(config, store=getattr(args, "store", None), embedder=args.embedder, progress=bar)
    if bar:
        bar.done()
    result["command"] = (
        f"memstrata-bench latency --store {result['store']} --memories {args.memories} --users {args.users} "
        f"--queries {args.queries} --context-queries {args.context_queries}"
        + (f" --posting-budget {args.posting_budget}" if args.posting_budget is not None else "")
        + (f" --busy-cores {args.busy_cores}" if args.busy_cores else "")
    )
    if args.out:
        write_result(args.out, args.name or f"latency-{result['store']}-{args.memories}-{args.users}", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def _posting_budget(args: argparse.Namespace) -> int | None:
    """-1 = the store's default; 0 on the command line = no limit (None)."""
    if args.posting_budget is None:
        return -1
    if args.posting_budget < 0:
        raise InvalidInput(f"--posting-budget must be 0 (no limit) or a positive number, got {args.posting_budget}")
    return args.posting_budget or None


def cmd_scale(args: argparse.Namespace) -> int:
    from . import latency, scale

    latency.exit_on_sigterm()  # stopping the run stops the current point too (which drops its database)

    points = scale.plan(
        stores=comma_list(args.stores),
        layouts=comma_list(args.layouts),
        sizes=_ints(args.sizes, "--sizes"),
        max_memories=args.max_memories,
        queries=args.queries,
        context_queries=args.context_queries,
    )
    result = scale.run(
        points,
        args.out,
        name=args.name,
        resume=args.resume,
        timeout=args.timeout,
        log=lambda msg: print(msg, file=sys.stderr),
    )
    print(json.dumps(result, indent=None if args.json else 2))
    return 0 if all("error" not in p for p in result["points"]) else 1


def cmd_peers(args: argparse.Namespace) -> int:
    from . import peers
    from .latency import ProgressBar
    from .report import write_result

    if peers.should_reexec():
        argv = ["peers", "--data", args.data, "--k", args.k, "--benchmark", args.benchmark]
        for option, value in (
            ("--peers", args.peers),
            ("--conversations", args.conversations),
            ("--out", args.out),
        ):
            argv += [option, str(value)] if value is not None else []
        embedder = ["--embedder", args.embedder] if args.embedder else []
        return peers.reexec([*embedder, *argv, *(["--json"] if args.json else [])])
    bar = None if args.json else ProgressBar("peers")
    result = peers.run(
        args.data,
        peers=comma_list(args.peers) if args.peers else peers.ALL_PEERS,
        conversations=args.conversations,
        ks=_ks(args.k),
        embedder=args.embedder,
        progress=bar,
        benchmark=args.benchmark,
    )
    if bar:
        bar.done()
    if args.out:
        write_result(args.out, "peers" if args.benchmark == "locomo" else f"peers-{args.benchmark}", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_plots(args: argparse.Namespace) -> int:
    from . import peers, plots

    if peers.should_reexec(probe=plots.matplotlib_available):
        return peers.reexec(["plots", "--results", args.results, "--out", args.out])
    for path in plots.render(args.results, args.out):
        print(path)
    return 0


def cmd_all(args: argparse.Namespace) -> int:
    from . import all as bench_all
    from .report import write_result

    chosen = bench_all.steps(
        args.data,
        args.out,
        quick=args.quick,
        max_memories=args.max_memories,
        stores=args.stores,
        resume=args.resume,
        skip=comma_list(args.skip),
        longmemeval=args.longmemeval,
    )
    outcome = bench_all.run(chosen, log=lambda msg: print(msg, file=sys.stderr))
    steps = [{"name": s.name, "command": s.command, **outcome[s.name]} for s in chosen]
    write_result(args.out, "bench-all", {"benchmark": "all", "steps": steps})
    print(json.dumps({"benchmark": "all", "steps": steps}, indent=2))
    return 0 if all(s["exit_code"] == 0 for s in steps) else 1


def cmd_tables(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import peers, scale

    results = Path(args.results)
    renderers = (("scale", scale.markdown_table), ("scale", scale.breakdown_table), ("peers", peers.markdown_table))
    for name, render in renderers:
        path = results / f"{name}.json"
        if path.exists():
            print(f"<!-- {path} -->\n{render(json.loads(path.read_text(encoding='utf-8')))}")
    return 0
