"""Progress bars on stderr for long CLI work (tqdm), shown when stderr is a terminal or with `--progress`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm


def add_progress_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true", default=None, help="draw a progress bar on stderr")
    group.add_argument(
        "--no-progress", action="store_false", dest="progress", help="no progress bar (default when not a terminal)"
    )


@contextmanager
def progress_bar(args: argparse.Namespace, label: str, unit: str) -> Iterator[Callable[[int, int], None]]:
    """A `progress(done, total)` callback drawing one bar; a no-op when progress is off.

    The bar is drawn from the first report on, with its total: work that reports nothing (a
    consolidation with nothing eligible, a dry run, an import with nothing new) leaves no bar stuck
    at zero on the terminal."""
    shown = sys.stderr.isatty() if args.progress is None else bool(args.progress)
    bars: list[tqdm[Any]] = []

    def advance(done: int, total: int) -> None:
        if not shown:
            return
        if not bars:
            bars.append(tqdm(desc=label, unit=unit, total=total, file=sys.stderr, dynamic_ncols=True, leave=True))
        bar = bars[0]
        if bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)

    try:
        yield advance
    finally:
        for bar in bars:
            bar.close()
