"""`memstrata-bench plots`: PNG charts from the result files (scale.json, peers.json).

matplotlib is a benchmark-only dependency: it is installed in the peers' virtualenv
(benchmarks/peers/requirements.txt), and `memstrata-bench plots` re-runs itself there when this
interpreter lacks it. Every chart names the result file its numbers come from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .scale import curves

SERIES_STYLE = {
    ("sqlite", "one_user"): ("tab:blue", "o"),
    ("sqlite", "many_users"): ("tab:cyan", "s"),
    ("postgres", "one_user"): ("tab:red", "o"),
    ("postgres", "many_users"): ("tab:orange", "s"),
}
LAYOUT_LABEL = {"one_user": "1 user", "many_users": "100/user"}


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(store: str, layout: str) -> str:
    return f"{store}, {LAYOUT_LABEL.get(layout, layout)}"


def _size_axis(ax: Any) -> None:
    ax.set_xscale("log")
    ax.set_xlabel("memories in the store")
    ax.grid(True, which="both", alpha=0.3)


def _plot_metric(ax: Any, result: dict[str, Any], metric: str, *, dashed: bool = False, suffix: str = "") -> None:
    for (store, layout), values in sorted(curves(result, metric).items()):
        color, marker = SERIES_STYLE.get((store, layout), ("black", "x"))
        xs, ys = zip(*values, strict=True)
        ax.plot(
            xs, ys, color=color, marker=marker, linestyle="--" if dashed else "-", label=_label(store, layout) + suffix
        )


def _save(fig: Any, path: Path, source: str) -> Path:
    fig.text(0.01, 0.005, f"source: {source}", fontsize=7, color="gray")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def plot_search(result: dict[str, Any], out: Path, source: str) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, q in zip(axes, ("p50", "p95", "p99"), strict=True):
        _plot_metric(ax, result, f"search_ms_{q}")
        _plot_metric(ax, result, f"search_no_embed_ms_{q}", dashed=True, suffix=" (no embedding)")
        ax.set_title(f"search latency {q} (hybrid, k=10)")
        ax.set_yscale("log")
        ax.set_ylabel("ms")
        _size_axis(ax)
    axes[0].legend(fontsize=7)
    return _save(fig, out, source)


def plot_context(result: dict[str, Any], out: Path, source: str) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, q in zip(axes, ("p50", "p95", "p99"), strict=True):
        _plot_metric(ax, result, f"context_ms_{q}")
        ax.set_title(f"context() latency {q} (1000 tokens)")
        ax.set_yscale("log")
        ax.set_ylabel("ms")
        _size_axis(ax)
    axes[0].legend(fontsize=7)
    return _save(fig, out, source)


def plot_throughput(result: dict[str, Any], out: Path, source: str) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    _plot_metric(axes[0], result, "add_per_s")
    axes[0].set_title("add_many (batches of 256, dedupe on) at size")
    _plot_metric(axes[1], result, "load_per_s")
    axes[1].set_title("bulk load (batches of 1000, dedupe off)")
    for ax in axes:
        ax.set_ylabel("memories / s")
        ax.set_yscale("log")
        _size_axis(ax)
    axes[0].legend(fontsize=7)
    return _save(fig, out, source)


def plot_footprint(result: dict[str, Any], out: Path, source: str) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    _plot_metric(axes[0], result, "rss_bytes_per_memory")
    axes[0].set_title("process RSS growth per memory (incl. ~60 MB fixed: model, imports)")
    axes[0].set_yscale("log")
    _plot_metric(axes[1], result, "disk_bytes_per_memory")
    axes[1].set_title("disk bytes per memory (tables + indexes)")
    for ax in axes:
        ax.set_ylabel("bytes")
        _size_axis(ax)
    axes[0].legend(fontsize=7)
    return _save(fig, out, source)


def plot_peers(result: dict[str, Any], out: Path, source: str) -> Path:
    plt = _pyplot()
    systems = {n: s for n, s in result.get("systems", {}).items() if "error" not in s}
    names = list(systems)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    recall = [systems[n]["overall"].get("recall@10", 0.0) for n in names]
    p95 = [systems[n].get("search_ms_p95", 0.0) for n in names]
    colors = ["tab:blue" if n.startswith("memstrata") else "tab:gray" for n in names]
    axes[0].barh(names, recall, color=colors)
    axes[0].set_xlabel("LoCoMo evidence recall@10")
    axes[1].barh(names, p95, color=colors)
    axes[1].set_xscale("log")
    axes[1].set_xlabel("search p95 ms (query embedding included)")
    for ax, values in ((axes[0], recall), (axes[1], p95)):
        ax.invert_yaxis()
        for y, v in enumerate(values):
            ax.text(v, y, f" {v:.3g}", va="center", fontsize=8)
    axes[0].set_title(f"same run, same embedder ({result.get('embedder')})")
    return _save(fig, out, source)


def render(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Every chart whose result file exists; returns the PNG paths written."""
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    written: list[Path] = []
    scale_path = results_dir / "scale.json"
    if scale_path.exists():
        scale = json.loads(scale_path.read_text(encoding="utf-8"))
        source = f"{scale_path.name} (memstrata-bench scale)"
        written += [
            plot_search(scale, out_dir / "scale_search.png", source),
            plot_context(scale, out_dir / "scale_context.png", source),
            plot_throughput(scale, out_dir / "scale_throughput.png", source),
            plot_footprint(scale, out_dir / "scale_footprint.png", source),
        ]
    peers_path = results_dir / "peers.json"
    if peers_path.exists():
        peers = json.loads(peers_path.read_text(encoding="utf-8"))
        written.append(plot_peers(peers, out_dir / "peers.png", f"{peers_path.name} (memstrata-bench peers)"))
    return written


__all__ = ["matplotlib_available", "render"]
