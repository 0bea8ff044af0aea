"""Progress bars on stderr for long CLI work (tqdm), shown when stderr is a terminal or with `--progress`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


def add_progress_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true", default=None, help="draw a progress bar on stderr")
    group.add_argument(
        "--no-progress", action="store_false", dest="progress", help="no progress bar (default when not a terminal)"
    )


@contextmanager
def progress_bar(args: argparse.Namespace, label: str, unit: str) -> Iterator[Callable[[int, int], None]]:
    """A `progress(done, total)` callback drawing one bar; a no-op when progress is off."""
    shown = sys.stderr.isatty() if args.progress is None else bool(args.progress)
    bar = tqdm(desc=label, unit=unit, file=sys.stderr, disable=not shown, dynamic_ncols=True, leave=True)

    def advance(done: int, total: int) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)

    try:
        yield advance
    finally:
        bar.close()
