"""Helpers shared by the benchmarks: percentiles, machine info, writing result files."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from memstrata.distribution import DISTRIBUTION


def comma_list(raw: str) -> list[str]:
    """The non-empty, stripped parts of a comma-separated option value ("sqlite, postgres" -> two names)."""
    return [part.strip() for part in raw.split(",") if part.strip()]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(ms: Sequence[float], prefix: str) -> dict[str, float]:
    return {
        f"{prefix}_p50": round(statistics.median(ms), 3) if ms else 0.0,
        f"{prefix}_p95": round(percentile(ms, 95), 3),
        f"{prefix}_p99": round(percentile(ms, 99), 3),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "memstrata": _version(DISTRIBUTION),
        "numpy": _version("numpy"),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def print_result(result: dict[str, Any], out: Path | None) -> None:
    """Print `result` as JSON and, when `out` is given, write it there too (the modules run by
    `python -m memstrata_bench.<name> --out FILE`)."""
    text = json.dumps(result, indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)


def write_result(out_dir: str | Path, name: str, result: dict[str, Any]) -> Path:
    """Write `result` plus machine info to OUT_DIR/NAME.json and return the path."""
    path = Path(out_dir) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**result, "machine": machine_info()}, indent=2) + "\n", encoding="utf-8")
    return path
