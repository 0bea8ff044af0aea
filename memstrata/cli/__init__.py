"""The `memstrata` command line. Each command group lives in its own module with a `register()`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence

from ..distribution import DISTRIBUTION, installed_version
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


GLOBAL_OPTIONS = {
    "--store": "store URL (default: $MEMSTRATA_STORE or sqlite:///.memstrata/memstrata.db)",
    "--embedder": "embedder spec (default: $MEMSTRATA_EMBEDDER or 'static')",
}


def add_global_options(parser: argparse.ArgumentParser, *, default: object = None) -> None:
    """The options every command takes, before or after the command's name (unless it defines its own)."""
    for option, text in GLOBAL_OPTIONS.items():
        if option not in parser._option_string_actions:
            parser.add_argument(option, default=default, help=text)


def leaf_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser of a command that runs (those without subcommands of their own)."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        yield parser
    for action in subcommands:
        for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
            yield from leaf_parsers(child)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memstrata", description="Layered long-term memory for AI agents.")
    parser.add_argument("--version", action="version", version=version_text(), help="print the version and exit")
    add_global_options(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(commands)
    for leaf in leaf_parsers(parser):
        # SUPPRESS: given after the command it wins; not given, the value before the command stays.
        add_global_options(leaf, default=argparse.SUPPRESS)
    return parser


def version_text() -> str:
    """`memstrata X.Y.Z (memstrata-ai)`: the installed distribution's version."""
    version = installed_version() or "(not installed: running from a source tree)"
    return f"memstrata {version} ({DISTRIBUTION})"


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
    except BrokenPipeError:
        code = _closed_pipe()
    return int(code or 0)


def _closed_pipe() -> int:
    """The reader went away (`memstrata export ... | head`): stop quietly like any Unix filter (128 + SIGPIPE).
    stdout is pointed at /dev/null so the interpreter's final flush raises nothing either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141
