"""Markdown tables of the LoCoMo, extraction and learn result files, for BENCHMARKS.md (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STRATEGIES = ("hybrid", "keyword", "semantic", "hybrid_rrf", "hybrid_weighted", "time_weighted")


def _load(directory: Path, name: str) -> dict[str, Any] | None:
    path = directory / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _r(result: dict[str, Any], key: str) -> str:
    return f"{result['overall'][key]:.3f}"


def strategies_table(directory: Path) -> str:
    rows = [
        "| strategy | R@1 | R@5 | R@10 | R@20 | R@10 c1 / c2 / c3 / c4 | search p50 / p95 ms | result file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        r = _load(directory, f"locomo-{strategy}")
        if r is None:
            continue
        cats = " / ".join(f"{r['by_category'][c]['recall@10']:.3f}" for c in ("1", "2", "3", "4"))
        rows.append(
            f"| `{strategy}`{' (default)' if strategy == 'hybrid' else ''} | {_r(r, 'recall@1')} | "
            f"{_r(r, 'recall@5')} | {_r(r, 'recall@10')} | {_r(r, 'recall@20')} | {cats} | "
            f"{r['search_ms_p50']:.1f} / {r['search_ms_p95']:.1f} | `locomo-{strategy}.json` |"
        )
    return "\n".join(rows)


def modes_table(directory: Path) -> str:
    rows = [
        "| what is stored | store | memories | R@5 | R@10 | R@20 | search p50 / p95 ms | ingest s | result file |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("locomo-hybrid", "locomo-hybrid-extracted", "locomo-hybrid-both", "locomo-hybrid-postgres"):
        r = _load(directory, name)
        if r is None:
            continue
        rows.append(
            f"| {r.get('mode', 'turns')} | {r['store']} | {r.get('memories', r['turns'])} | {_r(r, 'recall@5')} | "
            f"{_r(r, 'recall@10')} | {_r(r, 'recall@20')} | {r['search_ms_p50']:.1f} / {r['search_ms_p95']:.1f} | "
            f"{r['ingest_s']} | `{name}.json` |"
        )
    return "\n".join(rows)


def context_table(directory: Path) -> str:
    rows = [
        "| store | budget B | context_recall@B | mean context tokens | share of the full conversation |",
        "|---|---|---|---|---|",
    ]
    for name in ("locomo-hybrid", "locomo-hybrid-postgres"):
        r = _load(directory, name)
        if r is None or "budgets" not in r:
            continue
        for budget in r["budgets"]:
            rows.append(
                f"| {r['store']} | {budget} | {r[f'context_recall@{budget}']:.3f} | "
                f"{r[f'context_tokens_mean@{budget}']:.0f} | {100 * r[f'context_fraction@{budget}']:.1f} % |"
            )
    return "\n".join(rows)


def extraction_table(directory: Path) -> str:
    r = _load(directory, "extraction")
    if r is None:
        return ""
    rows = ["| split | precision | recall | F1 |", "|---|---|---|---|"]
    for split in ("dev", "heldout"):
        o = r[split]["overall"]
        rows.append(f"| {split} | {o['precision']:.3f} | {o['recall']:.3f} | {o['f1']:.3f} |")
    return "\n".join(rows)


def markdown(directory: str | Path) -> str:
    d = Path(directory)
    return "\n\n".join(t for t in (strategies_table(d), modes_table(d), context_table(d), extraction_table(d)) if t)
