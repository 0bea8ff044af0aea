"""A tiny real run of each benchmark subcommand: latency, scale, peers, plots, all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from memstrata_bench import latency, peers
from memstrata_bench.cli import main

LATENCY_KEYS = {
    "add_per_s",
    "add_messages_per_s",
    "store_hybrid_ms_p50",
    "source_at_k",
    "posting_budget",
    "search_ms_p50",
    "search_ms_p95",
    "search_ms_p99",
    "search_no_embed_ms_p50",
    "search_no_embed_ms_p95",
    "embed_ms_p50",
    "embed_ms_p95",
    "load_per_s",
    "rss_bytes_per_memory",
    "disk_bytes_per_memory",
    "command",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _json_out(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out = capsys.readouterr().out.strip().splitlines()
    parsed: dict[str, Any] = json.loads(
        out[-1] if out[-1].startswith("{") and out[-1].endswith("}") else "\n".join(out)
    )
    return parsed


def test_latency_on_sqlite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(
        [
            "latency",
            "--memories",
            "300",
            "--users",
            "3",
            "--queries",
            "6",
            "--context-queries",
            "2",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    result = _json_out(capsys)
    assert result.keys() >= LATENCY_KEYS
    assert result["store"] == "sqlite" and result["memories"] == 300 and result["users"] == 3
    assert result["queries"] == 6 and result["search_hits_mean"] > 0 and result["source_at_k"] >= 0.5
    assert result["add_per_s"] > 0 and result["add_messages_per_s"] > 0 and result["disk_bytes_per_memory"] > 0
    assert 0 < result["embed_ms_p50"] <= result["search_ms_p95"]
    written = json.loads((tmp_path / "latency-sqlite-300-3.json").read_text())
    assert written["machine"]["cpus"] >= 1 and written["search_ms_p95"] == result["search_ms_p95"]


def test_latency_store_option_works_before_and_after_the_subcommand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'given.db'}"
    assert main(["--store", url, "latency", "--memories", "50", "--queries", "3", "--json"]) == 0
    assert _json_out(capsys)["store"] == "sqlite"
    assert main(["latency", "--store", url, "--memories", "50", "--queries", "3", "--json"]) == 0
    assert _json_out(capsys)["memories"] == 50
    from memstrata.storage.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "given.db")
    try:
        assert store.user_ids() == []  # a user's own store gets its benchmark users erased afterwards
    finally:
        store.close()


@pytest.mark.postgres
def test_latency_on_a_throwaway_postgres(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.pg import connect_admin

    connect_admin().close()  # skips locally (fails under CI=true) when PostgreSQL is unreachable
    code = main(
        [
            "latency",
            "--store",
            "postgres",
            "--memories",
            "200",
            "--users",
            "2",
            "--queries",
            "5",
            "--context-queries",
            "2",
            "--json",
        ]
    )
    assert code == 0
    result = _json_out(capsys)
    assert result["store"] == "postgres" and result["search_hits_mean"] > 0
    assert result["disk_bytes"] > 0


def test_scale_writes_points_incrementally_and_resumes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = [
        "scale",
        "--stores",
        "sqlite",
        "--sizes",
        "200",
        "--queries",
        "4",
        "--context-queries",
        "1",
        "--out",
        str(tmp_path),
        "--json",
    ]
    assert main(argv) == 0
    first = json.loads((tmp_path / "scale.json").read_text())
    assert [(p["layout"], p["users"]) for p in first["points"]] == [("one_user", 1), ("many_users", 2)]
    assert all("error" not in p and p["search_ms_p95"] > 0 for p in first["points"])
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    again = json.loads((tmp_path / "scale.json").read_text())
    assert [p["wall_s"] for p in again["points"]] == [p["wall_s"] for p in first["points"]]


def test_peers_in_process_with_memstrata_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, locomo_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(peers.INPROCESS_ENV, "1")
    code = main(
        [
            "peers",
            "--data",
            str(locomo_file),
            "--peers",
            "memstrata",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    result = _json_out(capsys)
    assert result["conversations"] == 2 and result["questions"] == 8
    reference = result["systems"]["memstrata"]
    assert reference["overall"]["recall@10"] == 1.0  # six turns per conversation: everything is in the top 10
    assert reference["overall"]["recall@1"] > 0.5
    assert result["ratios"]["memstrata"]["recall@10"] == 1.0
    assert (tmp_path / "peers.json").exists()


needs_peers_venv = pytest.mark.skipif(
    not peers.peers_python().exists(),
    reason="the optional peers virtualenv (benchmarks/peers/setup.sh) is absent",
)


@needs_peers_venv
def test_peers_and_plots_in_the_peers_venv(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, locomo_file: Path
) -> None:
    results = tmp_path / "results"
    code = main(
        [
            "peers",
            "--data",
            str(locomo_file),
            "--peers",
            "memstrata,bm25,langgraph-inmemory,mem0",
            "--out",
            str(results),
            "--json",
        ]
    )
    assert code == 0
    result = json.loads((results / "peers.json").read_text())
    assert set(result["systems"]) == {"memstrata", "bm25", "langgraph-inmemory", "mem0"}
    for name, system in result["systems"].items():
        assert "error" not in system, (name, system)
        assert system["overall"]["recall@10"] > 0
    assert result["versions"]["bm25s"] and result["versions"]["mem0ai"]
    assert set(result["ratios"]) == set(result["systems"])
    metrics = (
        "search_ms_p50",
        "search_ms_p95",
        "search_ms_p99",
        "search_no_embed_ms_p50",
        "search_no_embed_ms_p95",
        "search_no_embed_ms_p99",
        "add_per_s",
        "load_per_s",
        "rss_bytes_per_memory",
        "disk_bytes_per_memory",
    )
    points = [
        {"store": "sqlite", "layout": "one_user", "memories": m, **{name: float(m) for name in metrics}}
        for m in (1000, 10000)
    ]
    (results / "scale.json").write_text(json.dumps({"points": points}))
    capfd.readouterr()
    assert main(["plots", "--results", str(results), "--out", str(tmp_path / "plots")]) == 0
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == [
        "peers.png",
        "scale_context.png",
        "scale_footprint.png",
        "scale_search.png",
        "scale_throughput.png",
    ]
    for png in (tmp_path / "plots").glob("*.png"):
        assert png.read_bytes().startswith(PNG_MAGIC)


def test_all_quick_runs_each_step_and_records_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, locomo_file: Path
) -> None:
    out = tmp_path / "results"
    code = main(
        [
            "all",
            "--quick",
            "--data",
            str(locomo_file),
            "--out",
            str(out),
            "--stores",
            "sqlite",
            "--skip",
            "locomo-semantic,locomo-keyword,locomo-hybrid-extracted,locomo-hybrid-both,peers,embedders,"
            "learn,load,plots",
        ]
    )
    assert code == 0
    summary = json.loads((out / "bench-all.json").read_text())
    assert [s["name"] for s in summary["steps"]] == ["locomo-hybrid", "extraction", "scale"]
    assert all(s["exit_code"] == 0 and s["command"].startswith("memstrata-bench ") for s in summary["steps"])
    for name in ("locomo-hybrid.json", "extraction.json", "scale.json"):
        assert (out / name).exists(), name
    scale = json.loads((out / "scale.json").read_text())
    assert {p["memories"] for p in scale["points"]} == {1000}


def test_latency_posting_budget_option(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["latency", "--memories", "120", "--queries", "3", "--context-queries", "1", "--json"]
    assert main([*args, "--posting-budget", "0"]) == 0
    unlimited = _json_out(capsys)
    assert unlimited["posting_budget"] is None and unlimited["command"].endswith("--posting-budget 0")
    assert main([*args, "--posting-budget", "500"]) == 0
    assert _json_out(capsys)["posting_budget"] == 500
    assert main([*args, "--posting-budget", "-3"]) != 0


def test_latency_busy_cores_option(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["latency", "--memories", "120", "--queries", "3", "--context-queries", "1", "--json"]
    assert main([*args, "--busy-cores", "1"]) == 0
    loaded = _json_out(capsys)
    assert loaded["busy_cores"] == 1 and loaded["command"].endswith("--busy-cores 1")
    assert main(args) == 0
    assert _json_out(capsys)["busy_cores"] == 0
    assert main([*args, "--busy-cores", "-1"]) != 0
    assert "--busy-cores must be 0 or more" in capsys.readouterr().err


def test_busy_cores_spin_inside_the_block_only() -> None:
    with latency.busy_cores(2) as spinners:
        assert len(spinners) == 2 and all(s.poll() is None for s in spinners)
    assert all(s.poll() is not None for s in spinners)


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_locomo_on_a_throwaway_store(capsys: pytest.CaptureFixture[str], locomo_file: Path, store: str) -> None:
    """`bench locomo --store postgres` makes (and drops) its own database, like `bench latency`."""
    if store == "postgres":
        from tests.support.pg import connect_admin

        connect_admin().close()  # skips locally (fails under CI=true) when PostgreSQL is unreachable
    assert main(["locomo", "--data", str(locomo_file), "--store", store, "--k", "1,10", "--json"]) == 0
    result = _json_out(capsys)
    assert result["store"] == ("sqlite" if store == "sqlite" else "postgresql")
    assert result["questions"] == 8 and result["overall"]["recall@10"] == 1.0


def test_encryption_compares_plain_and_encrypted_in_one_run(
    capsys: pytest.CaptureFixture[str], locomo_file: Path, tmp_path: Path
) -> None:
    from memstrata_bench.encryption import alternating

    assert alternating(2) == [False, True, True, False]
    argv = [
        "encryption",
        "--data",
        str(locomo_file),
        "--memories",
        "200",
        "--queries",
        "5",
        "--rounds",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    capsys.readouterr()
    result = json.loads((tmp_path / "encryption.json").read_text())
    assert result["recall_identical"] and result["recall"]["encrypted"]["recall@10"] == 1.0
    assert len(result["runs"]["plain"]) == len(result["runs"]["encrypted"]) == 1
    assert result["encrypted"]["add_per_s"] > 0 and result["ratio_encrypted_over_plain"]["search_ms_p95"] > 0


@pytest.mark.postgres
def test_parity_compares_both_stores_on_the_same_data(capsys: pytest.CaptureFixture[str], locomo_file: Path) -> None:
    from tests.support.pg import connect_admin

    connect_admin().close()
    assert main(["parity", "--data", str(locomo_file), "--json"]) == 0
    result = _json_out(capsys)
    for layout in ("locomo_alone", "locomo_shared"):
        for strategy in ("keyword", "hybrid"):
            row = result[layout][strategy]
            assert row["questions"] == 8 and 0 <= row["agreement@10"]["overlap"] <= 1
    alone = result["locomo_alone"]["keyword"]
    assert alone["sqlite_recall@10"] == alone["postgres_recall@10"]  # one user per store: the same ranking


@pytest.mark.postgres
def test_bulkload_times_search_after_the_load_and_in_steady_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.support.pg import connect_admin

    connect_admin().close()
    args = ["bulkload", "--memories", "1200", "--existing", "40", "--queries", "20", "--out", str(tmp_path)]
    assert main([*args, "--json"]) == 0
    result = _json_out(capsys)
    assert result["store_analyzed_during_load"] >= 1 and result["after_load"]["search_ms_p95"] > 0
    assert (tmp_path / "postgres-bulkload.json").exists()


@pytest.mark.postgres
def test_encryption_on_postgres_compares_sealed_and_plain_in_one_run(
    capsys: pytest.CaptureFixture[str], locomo_file: Path, tmp_path: Path
) -> None:
    """`bench encryption --store postgres`: crypto-shredding against the plain store, both on throwaway
    databases (the master key is set only while the sealed runs run)."""
    from tests.support.pg import connect_admin

    connect_admin().close()  # skips locally (fails under CI=true) when PostgreSQL is unreachable
    argv = [
        "encryption",
        "--store",
        "postgres",
        "--data",
        str(locomo_file),
        "--memories",
        "200",
        "--queries",
        "5",
        "--rounds",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    capsys.readouterr()
    result = json.loads((tmp_path / "encryption-postgres.json").read_text())
    assert result["store"] == "postgres" and result["recall_identical"]
    assert result["recall"]["encrypted"]["recall@10"] == 1.0
    assert result["encrypted"]["add_per_s"] > 0 and result["ratio_encrypted_over_plain"]["search_ms_p95"] > 0
    assert "MEMSTRATA_MASTER_KEY" not in os.environ


def test_sealing_cost_interleaves_the_stores_and_divides_sealed_by_plain() -> None:
    from memstrata_bench.sealing_cost import interleaved, ratios, summary

    assert [[store for store, _ in interleaved(i, lambda s: lambda: s)] for i in range(4)] == [
        ["plain", "sealed", "sealed_uncached"],
        ["sealed", "sealed_uncached", "plain"],
        ["sealed_uncached", "plain", "sealed"],
        ["plain", "sealed", "sealed_uncached"],
    ]
    plain = summary("add", [1.0, 2.0, 4.0], 0.3, 0.6, per=256)
    sealed = summary("add", [2.0, 2.0, 2.0], 0.6, 0.9, per=256)
    assert plain == {"add_per_s": 128.0, "add_client_cpu_ms": 100.0, "add_server_cpu_ms": 200.0}
    ratio = ratios(plain, sealed)
    assert ratio["add_per_s"] == 1.0 and ratio["add_client_cpu_ms"] == 2.0 and ratio["add_cpu_ms"] == 1.667
    latency = summary("search", [0.010, 0.020, 0.030], 0.003, 0.0, per=None)
    assert latency["search_ms_p50"] == 20.0 and latency["search_server_cpu_ms"] == 0.0


@pytest.mark.postgres
def test_sealing_cost_measures_both_postgres_stores_in_one_process(tmp_path: Path) -> None:
    """`python -m memstrata_bench.sealing_cost`: a plain and a sealed throwaway database, every operation on both."""
    from memstrata_bench import sealing_cost

    from tests.support.pg import connect_admin

    connect_admin().close()
    argv = ["--memories", "300", "--queries", "6", "--batches", "2", "--out", str(tmp_path), "--name", "cost"]
    assert sealing_cost.main(iter(argv)) == 0
    result = json.loads((tmp_path / "cost.json").read_text())
    for store in ("plain", "sealed", "sealed_uncached"):
        figures = result[store]
        assert figures["load_per_s"] > 0 and figures["add_per_s"] > 0 and figures["search_ms_p95"] > 0
        assert figures["store_hybrid_client_cpu_ms"] > 0
    assert result["ratio_sealed_over_plain"]["search_cpu_ms"] > 0
    assert result["opened_cache"]["hits"] > 0 and result["opened_cache"]["misses"] > 0
    assert "MEMSTRATA_MASTER_KEY" not in os.environ


@pytest.mark.redis
def test_buffer_append_times_appends_by_session_size_on_both_buffers(tmp_path: Path) -> None:
    """`python -m memstrata_bench.buffer_append`: every append really lands, and each row says what it timed."""
    from memstrata_bench import buffer_append

    from tests.conversation.conftest import redis_client, redis_url

    redis_client().close()
    argv = ["--held", "5,40", "--appends", "30", "--redis-url", redis_url(), "--out", str(tmp_path), "--name", "b"]
    buffer_append.main(argv)
    rows = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert [(r["backend"], r["held"], r["appends"]) for r in rows] == [
        ("memory", 5, 30),
        ("memory", 40, 30),
        ("redis", 5, 30),
        ("redis", 40, 30),
    ]
    assert all(r["append_ms_p50"] > 0 for r in rows)
    assert all(r["server_cpu_ms_per_append"] >= 0 for r in rows if r["backend"] == "redis")
