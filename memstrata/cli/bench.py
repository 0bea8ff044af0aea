"""`memstrata bench ...`: hands its arguments to the benchmark harness, `memstrata-bench`.

The harness is not part of the memstrata package: it lives in the repository's `benchmarks/`
directory, with its own dependencies and test data, and is installed from a checkout
(`make bench`, or `pip install -e benchmarks`). Without it this command says how to get it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from typing import Any

from ..errors import ConfigurationError

HARNESS = "memstrata_bench"
MISSING = (
    "the benchmark harness is not installed: it is not part of the memstrata package but lives in "
    "the repository's benchmarks/ directory; from a checkout run `make bench` or "
    "`pip install -e benchmarks`, then `memstrata-bench --help`"
)


def register(commands: Any) -> None:
    bench = commands.add_parser(
        "bench", help="run a benchmark with the harness of a checkout (memstrata-bench)", add_help=False
    )
    bench.add_argument("-h", "--help", action="store_true", dest="harness_help", help="the harness's own help")
    bench.add_argument("arguments", nargs=argparse.REMAINDER, help="the memstrata-bench arguments")
    bench.set_defaults(handler=cmd_bench)


def harness_installed() -> bool:
    return importlib.util.find_spec(HARNESS) is not None


def forwarded(args: argparse.Namespace) -> list[str]:
    """The harness's argv: the global options given to `memstrata`, then everything after `bench` (pure)."""
    options = [
        part
        for option, value in (("--embedder", args.embedder), ("--store", getattr(args, "store", None)))
        if value
        for part in (option, value)
    ]
    asked_help = getattr(args, "harness_help", False) or not args.arguments
    return [*options, *(["--help"] if asked_help else []), *args.arguments]


def cmd_bench(args: argparse.Namespace) -> int:
    if not harness_installed():
        raise ConfigurationError(MISSING)
    harness = importlib.import_module(f"{HARNESS}.cli")
    return int(harness.main(forwarded(args)))
