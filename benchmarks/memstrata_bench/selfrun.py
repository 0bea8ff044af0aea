"""Running the harness again in a fresh interpreter: one benchmark step or scale point per process, so
one run's memory or crash never touches the next."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TOOL_ROOT = Path(__file__).resolve().parent.parent
"""The directory holding the `memstrata_bench` package (`benchmarks/` of a checkout)."""


def memstrata_source() -> Path:
    """The checkout (or site-packages directory) the measured `memstrata` package is imported from."""
    import memstrata

    return Path(memstrata.__file__).resolve().parents[1]


def command(python: str = sys.executable) -> list[str]:
    """The argv prefix that runs `memstrata-bench` with `python`."""
    return [python, "-m", "memstrata_bench"]


def environment(**extra: str) -> dict[str, str]:
    """This process's environment, with the harness importable even where it is not installed
    (a checkout's `benchmarks/` first on PYTHONPATH), plus `extra`."""
    inherited = os.environ.get("PYTHONPATH")
    path = os.pathsep.join([str(TOOL_ROOT), *([inherited] if inherited else [])])
    return {**os.environ, "PYTHONPATH": path, **extra}
