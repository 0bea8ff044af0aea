"""The `memstrata` command line. Each command group lives in its own module with a `register()`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import BackendError, MemstrataError, NotFound, UsageError
from . import bench, db, lifecycle, memories, queue, server, store

COMMAND_MODULES = (server, memories, lifecycle, queue, bench, db, store)

EXIT_CODES: tuple[tuple[type[MemstrataError], int], ...] = (
    (NotFound, 3),
    (UsageError, 2),
    (BackendError, 4),
    (MemstrataError, 1),
)
"""The one table mapping the exception tree to exit codes (first match wins)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memstrata", description="Layered long-term memory for AI agents.")
    parser.add_argument("--store", help="store URL (default: $MEMSTRATA_STORE or sqlite:///.memstrata/memstrata.db)")
    parser.add_argument("--embedder", help="embedder spec (default: $MEMSTRATA_EMBEDDER or 'static')")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.handler(args)
    except MemstrataError as exc:
        code = next(c for kind, c in EXIT_CODES if isinstance(exc, kind))
        print(f"error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    return int(code or 0)
