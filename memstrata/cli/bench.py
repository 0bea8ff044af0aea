"""`memstrata bench locomo | ...`: reproducible benchmarks, JSON on stdout and in result files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import InvalidInput
from ..semantic import Strategy


def register(commands: Any) -> None:
    bench = commands.add_parser("bench", help="run a benchmark")
    kinds = bench.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")

    locomo = kinds.add_parser("locomo", help="LoCoMo evidence recall@k and search latency")
    locomo.add_argument("--data", required=True, help="path to a locomo10.json-format file")
    locomo.add_argument("--strategy", default=Strategy.HYBRID.value, choices=[s.value for s in Strategy])
    locomo.add_argument("--k", default="1,5,10,20", help="comma-separated cut-offs")
    locomo.add_argument("--out", help="also write the result JSON to this directory")
    locomo.add_argument("--name", help="result file name (default: locomo-<strategy>)")
    locomo.add_argument("--json", action="store_true", help="print only the JSON object")
    locomo.set_defaults(handler=cmd_locomo)

    extraction = kinds.add_parser("extraction", help="precision/recall of the offline extractor on the labelled set")
    extraction.add_argument("--data", help="labelled JSONL (default: benchmarks/extraction/labelled.jsonl)")
    extraction.add_argument("--out", help="also write the result JSON to this directory")
    extraction.add_argument("--json", action="store_true", help="print only the JSON object")
    extraction.set_defaults(handler=cmd_extraction)


def _ks(raw: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in raw.split(",") if k.strip()})
    except ValueError:
        raise InvalidInput(f"--k must be comma-separated integers, got {raw!r}") from None
    if not ks or ks[0] < 1:
        raise InvalidInput("--k values must be >= 1")
    return ks


def cmd_locomo(args: argparse.Namespace) -> int:
    from ..bench import locomo
    from ..bench.report import write_result

    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    result = locomo.run(
        args.data, store=args.store, embedder=args.embedder, strategy=args.strategy, ks=_ks(args.k),
        progress=progress,
    )  # fmt: skip
    if args.out:
        write_result(args.out, args.name or f"locomo-{args.strategy}", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


def cmd_extraction(args: argparse.Namespace) -> int:
    from ..bench import extraction
    from ..bench.report import write_result

    result = extraction.main_json(args.data) if args.data else extraction.main_json()
    if args.out:
        write_result(args.out, "extraction", result)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0
