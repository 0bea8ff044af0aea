"""memstrata_bench.ingest_before_after: the summary of alternating rounds, and the old tree it checks out."""

from __future__ import annotations

from pathlib import Path

from memstrata_bench.ingest_before_after import old_tree, summarize
from memstrata_bench.selfrun import memstrata_source


def test_summary_is_the_median_of_each_side_and_new_over_old() -> None:
    rounds = {
        "old": [{"sqlite_add_per_s": v, "postgres_context_p95_ms": 10.0 + v} for v in (100.0, 300.0, 200.0)],
        "new": [{"sqlite_add_per_s": v, "postgres_context_p95_ms": 10.0 + v} for v in (150.0, 450.0, 50.0)],
    }
    summary = summarize(rounds)
    assert summary["old"] == {"sqlite_add_per_s": 200.0, "postgres_context_p95_ms": 210.0}
    assert summary["new"] == {"sqlite_add_per_s": 150.0, "postgres_context_p95_ms": 160.0}
    assert summary["new_over_old"] == {"sqlite_add_per_s": 0.75, "postgres_context_p95_ms": round(160 / 210, 3)}


def test_old_tree_is_a_worktree_of_the_commit_removed_afterwards() -> None:
    repo = memstrata_source()
    with old_tree(repo, "HEAD") as tree:
        assert (tree / "memstrata" / "__init__.py").is_file()
        kept = Path(tree)
    assert not kept.exists()
