"""The pure parts of the latency / scale / peers / all harnesses."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from memstrata_bench import all as bench_all
from memstrata_bench import latency, peers, scale

from memstrata import InvalidInput
from memstrata.core.text import STOPWORDS
from memstrata.embedders.static import StaticEmbedder


def test_vocabulary_keeps_whole_words_and_drops_stopwords() -> None:
    tokens = ["the", "kitten", "##ing", "[CLS]", "ab", "cello", "kitten", "Paris", "marathon123", "because"]
    assert latency.vocabulary(tokens) == ["kitten", "cello"]


def test_model_vocabulary_is_large_and_clean() -> None:
    words = latency.model_vocabulary()
    assert len(words) > 10_000
    assert all(w.isalpha() and w.islower() and 3 <= len(w) <= 12 for w in words[:500])


def test_zipf_weights_sum_to_one_and_decrease() -> None:
    weights = latency.zipf_weights(1000)
    assert weights.sum() == pytest.approx(1.0)
    assert np.all(np.diff(weights) < 0)
    assert weights[0] / weights[9] == pytest.approx((110 / 101) ** 1.1)  # Zipf-Mandelbrot, rank offset 100
    assert latency.zipf_weights(10, offset=0)[0] / latency.zipf_weights(10, offset=0)[9] == pytest.approx(10**1.1)
    with pytest.raises(InvalidInput):
        latency.zipf_weights(0)


def test_synthetic_texts_are_deterministic_and_sized() -> None:
    words = [f"word{i}" for i in range(50)]
    weights = latency.zipf_weights(len(words))
    first = latency.synthetic_texts(np.random.default_rng(3), words, weights, 20)
    second = latency.synthetic_texts(np.random.default_rng(3), words, weights, 20)
    assert first == second
    stopwords = 0
    for text in first:
        assert text.endswith(".") and text[0].isupper()
        tokens = text.rstrip(".").lower().split()
        content = [t for t in tokens if t in words]
        assert 6 <= len(content) <= 18
        assert all(t in words or t in STOPWORDS for t in tokens)
        stopwords += len(tokens) - len(content)
    assert 0.25 < stopwords / sum(len(t.split()) for t in first) < 0.55


def test_make_query_takes_four_content_words_of_the_text_plus_one() -> None:
    rng = np.random.default_rng(1)
    text = "Kitten and the cello in lisbon bakery marathon berlin ramen station."
    query = latency.make_query(rng, text, ["zebra"]).split()
    assert len(query) == 5
    assert query[-1] == "zebra"
    assert set(query[:4]) <= set(text.rstrip(".").lower().split()) - STOPWORDS


def test_spread_is_even_and_validated() -> None:
    assert latency.spread(10, 3) == [4, 3, 3]
    assert sum(latency.spread(1_000_000, 10_000)) == 1_000_000
    for memories, users in ((0, 1), (5, 0), (3, 4)):
        with pytest.raises(InvalidInput):
            latency.spread(memories, users)


def test_parse_status_reads_rss_in_bytes() -> None:
    text = "Name:\tpython\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t4\n"
    assert latency.parse_status(text) == {"VmHWM": 2048 * 1024, "VmRSS": 1024 * 1024}
    assert latency.rss_bytes().get("VmHWM", 0) > 0


def test_timed_embedder_answers_from_precomputed_vectors_only_when_asked() -> None:
    inner = StaticEmbedder()
    timed = latency.TimedEmbedder(inner)
    assert (timed.name, timed.dimensions) == (inner.name, inner.dimensions)
    marker = np.full(inner.dimensions, 0.5, dtype=np.float32)
    timed.precomputed["kitten"] = marker
    assert not np.array_equal(timed.embed_query("kitten"), marker)
    timed.use_precomputed = True
    assert np.array_equal(timed.embed_query("kitten"), marker)
    assert np.allclose(timed.embed_query("cello"), inner.embed_query("cello"))


def test_progress_bar_renders_and_writes_one_line_per_stage_to_a_log() -> None:
    assert latency.ProgressBar.render("x", 0.5, "load", width=10) == "x [#####-----]  50% load"
    assert latency.ProgressBar.render("x", 2.0, "done", width=4) == "x [####] 100% done"
    stream = io.StringIO()
    bar = latency.ProgressBar("run", width=4, stream=stream)
    for i in range(1, 5):
        bar("load", i / 4)
    bar("search", 0.5)
    assert stream.getvalue().splitlines() == [
        "run [#---]  25% load",
        "run [####] 100% load",
        "run [##--]  50% search",
    ]


def test_bench_store_rejects_unknown_specs() -> None:
    from memstrata import ConfigurationError

    with pytest.raises(ConfigurationError), latency.bench_store("mysql://x"):
        pass


def test_scale_plan_orders_by_size_and_caps() -> None:
    points = scale.plan(sizes=(10_000, 1_000, 1_000_000), max_memories=10_000, queries=20, context_queries=5)
    assert [p.memories for p in points] == [1_000] * 4 + [10_000] * 4
    assert {(p.store, p.layout) for p in points} == {
        (store, layout) for store in ("sqlite", "postgres") for layout in ("one_user", "many_users")
    }
    many = next(p for p in points if p.layout == "many_users" and p.memories == 10_000)
    assert many.users == 100
    argv = many.argv()
    assert argv[:1] == ["latency"] and argv[argv.index("--users") + 1] == "100"
    with pytest.raises(InvalidInput):
        scale.plan(stores=("mysql",))
    with pytest.raises(InvalidInput):
        scale.plan(layouts=("weird",))


def test_scale_done_keys_parse_output_and_curves() -> None:
    result = {
        "points": [
            {
                "store": "sqlite",
                "layout": "one_user",
                "memories": 1000,
                "requested_queries": 20,
                "search_ms_p95": 2.0,
            },
            {
                "store": "sqlite",
                "layout": "one_user",
                "memories": 100,
                "requested_queries": 20,
                "search_ms_p95": 1.0,
            },
            {
                "store": "postgres",
                "layout": "one_user",
                "memories": 100,
                "requested_queries": 20,
                "error": "boom",
            },
        ]
    }
    assert scale.done_keys(result) == {("sqlite", "one_user", 1000, 20), ("sqlite", "one_user", 100, 20)}
    assert scale.curves(result, "search_ms_p95") == {("sqlite", "one_user"): [(100, 1.0), (1000, 2.0)]}
    assert scale.parse_output('progress\n{"a": 1}\n\n') == {"a": 1}
    with pytest.raises(InvalidInput):
        scale.parse_output("   \n")
    with pytest.raises(InvalidInput):
        scale.parse_output("[1, 2]")


def test_peer_ratios_divide_by_the_reference() -> None:
    systems = {
        "memstrata": {"overall": {"recall@10": 0.5}, "search_ms_p95": 2.0, "search_ms_p50": 1.0},
        "bm25": {"overall": {"recall@10": 0.4}, "search_ms_p95": 0.5, "search_ms_p50": 0.25},
        "broken": {"error": "ImportError: no"},
    }
    got = peers.ratios(systems)
    assert got["memstrata"] == {"recall@10": 1.0, "search_p95": 1.0, "search_p50": 1.0}
    assert got["bm25"] == {"recall@10": 0.8, "search_p95": 0.25, "search_p50": 0.25}
    assert "broken" not in got
    assert peers.ratios({"bm25": systems["bm25"]}) == {}


def test_mean_recalls() -> None:
    rows = [{1: 0.0, 10: 1.0}, {1: 1.0, 10: 1.0}]
    assert peers.mean_recalls(rows, [1, 10]) == {"recall@1": 0.5, "recall@10": 1.0}
    assert peers.mean_recalls([], [5]) == {"recall@5": 0.0}


def test_should_reexec_only_when_peers_are_missing_and_not_already_reexecuted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(peers.INPROCESS_ENV, raising=False)
    assert peers.should_reexec(probe=lambda: False)
    assert not peers.should_reexec(probe=lambda: True)
    monkeypatch.setenv(peers.INPROCESS_ENV, "1")
    assert not peers.should_reexec(probe=lambda: False)


def test_peers_python_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.delenv(peers.PYTHON_ENV, raising=False)
    monkeypatch.setenv(peers.VENV_ENV, "/opt/bench-venv")
    assert str(peers.peers_python()) == "/opt/bench-venv/bin/python"
    monkeypatch.setenv(peers.PYTHON_ENV, "/usr/bin/python3")
    assert str(peers.peers_python()) == "/usr/bin/python3"


def test_reexec_without_the_venv_explains_how_to_create_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstrata import ConfigurationError

    monkeypatch.setenv(peers.PYTHON_ENV, "/nonexistent/bin/python")
    with pytest.raises(ConfigurationError, match="setup.sh"):
        peers.reexec(["peers", "--data", "x.json"])


def test_all_steps_name_their_commands_and_results() -> None:
    chosen = bench_all.steps("/data/locomo.json", "out/results", max_memories=100_000)
    assert [s.name for s in chosen] == [
        "locomo-hybrid",
        "locomo-semantic",
        "locomo-keyword",
        "locomo-hybrid-extracted",
        "locomo-hybrid-both",
        "peers",
        "embedders",
        "extraction",
        "learn",
        "load",
        "scale",
        "latency-postgres-100000-1-run1",
        "latency-postgres-100000-1-run2",
        "latency-postgres-100000-1-run3",
        "latency-postgres-100000-1-busy1",
        "latency-sqlite-100000-1-unpruned",
        "latency-sqlite-100000-1-pruned",
        "latency-sqlite-100000-1-budget2000",
        "plots",
    ]
    by_name = {s.name: s for s in chosen}
    assert by_name["scale"].command.startswith("memstrata-bench scale --out out/results")
    assert "--max-memories 100000" in by_name["scale"].command and "--resume" not in by_name["scale"].command
    assert by_name["plots"].argv[-1] == "out/plots"
    assert by_name["load"].command == "python -m memstrata_bench.load --out out/results/load.json"
    assert by_name["load"].args("py")[:3] == ["py", "-m", "memstrata_bench.load"]
    assert by_name["learn"].args("py")[:3] == ["py", "-m", "memstrata_bench"]
    busy = by_name["latency-postgres-100000-1-busy1"]
    assert busy.command == (
        "memstrata-bench latency --memories 100000 --users 1 --out out/results --json --store postgres "
        "--busy-cores 1 --name latency-postgres-100000-1-busy1"
    )
    assert busy.result == "latency-postgres-100000-1-busy1.json"
    assert "--posting-budget 0" in by_name["latency-sqlite-100000-1-unpruned"].command
    assert "--posting-budget" not in by_name["latency-sqlite-100000-1-pruned"].command
    sqlite_only = [s.name for s in bench_all.steps(None, "o", stores="sqlite", max_memories=100_000)]
    assert not any("postgres" in name for name in sqlite_only) and "latency-sqlite-100000-1-pruned" in sqlite_only
    assert not any(n.startswith("latency-") for n in (s.name for s in bench_all.steps(None, "o", max_memories=10_000)))
    full = {s.name: s for s in bench_all.steps(None, "o", skip=("plots",))}
    assert [n for n in full if not n.startswith("latency-")] == ["extraction", "learn", "load", "scale", "scale-1m"]
    assert "--sizes 1000000 --queries 50 --context-queries 10 --resume" in full["scale-1m"].command
    quick = {s.name: s for s in bench_all.steps("d.json", "o", quick=True)}
    assert "--conversations" in quick["peers"].argv and "scale-1m" not in quick
    assert "--max-memories 1000" in quick["scale"].command


def test_result_json_round_trips() -> None:
    assert json.loads(json.dumps(peers.versions()))["memstrata"]


def _point(store: str, layout: str, memories: int, **extra: object) -> dict[str, object]:
    metrics = (
        "search_ms",
        "search_no_embed_ms",
        "embed_ms",
        "context_ms",
        "store_vector_ms",
        "store_keyword_ms",
        "store_hybrid_ms",
        "store_access_ms",
    )
    values = {f"{m}_{q}": 1.5 for m in metrics for q in ("p50", "p95", "p99")}
    return {
        "store": store,
        "layout": layout,
        "memories": memories,
        "users": 1,
        "add_per_s": 1234.0,
        "add_messages_per_s": 987.0,
        "source_at_k": 0.975,
        **values,
        **extra,
    }


def test_scale_tables_list_points_by_size_and_show_errors() -> None:
    failed = {"store": "postgres", "layout": "many_users", "memories": 1_000, "users": 10, "error": "boom"}
    result = {"points": [_point("sqlite", "one_user", 10_000), _point("postgres", "one_user", 1_000), failed]}
    table = scale.markdown_table(result).splitlines()
    assert table[0].startswith("| store | layout | memories |") and len(table) == 5
    assert table[2].startswith("| postgres | many_users | 1,000 | 10 | error: boom")
    assert table[4].startswith("| sqlite | one_user | 10,000 | 1 | 1,234 | 987 |")
    assert "1.50 / 1.50 / 1.50" in table[4]
    breakdown = scale.breakdown_table(result).splitlines()
    assert len(breakdown) == 4 and breakdown[2].startswith("| postgres | one_user | 1,000 | 1.50 |")
    assert breakdown[2].count("1.50") == 7  # search, no embedding, embed, vector, keyword, both in one read, access
    assert breakdown[2].endswith("| 0.975 |")


def test_peers_table_has_ratios_and_errors() -> None:
    result = {
        "systems": {
            "memstrata": {
                "overall": {"recall@1": 0.5, "recall@10": 0.8},
                "search_ms_p50": 1.0,
                "search_ms_p95": 2.0,
                "search_ms_p99": 3.0,
                "ingest_s": 1.0,
            },
            "mem0": {"error": "ImportError: no module named mem0"},
        },
        "ratios": {"memstrata": {"recall@10": 1.0, "search_p95": 1.0}},
    }
    lines = peers.markdown_table(result).splitlines()
    assert lines[0].startswith("| system | recall@1 | recall@10 |")
    assert lines[2] == "| memstrata | 0.500 | 0.800 | 1.00 / 2.00 / 3.00 | 1.0 | 1.0 | 1.0 |"
    assert lines[3] == "| mem0 | not run: ImportError: no module named mem0 |"


def test_all_runs_longmemeval_steps_when_given_its_file() -> None:
    chosen = {s.name: s for s in bench_all.steps(None, "o", longmemeval="/d/lme.json.gz", max_memories=1000)}
    assert {"longmemeval-turn", "longmemeval-session", "peers-longmemeval"} <= set(chosen)
    assert chosen["longmemeval-turn"].command == (
        "memstrata-bench longmemeval --data /d/lme.json.gz --granularity turn --out o --json"
    )
    assert chosen["peers-longmemeval"].result == "peers-longmemeval.json"
    assert "--benchmark longmemeval" in chosen["peers-longmemeval"].command
    quick = {s.name: s for s in bench_all.steps(None, "o", longmemeval="x", quick=True)}
    assert "--limit 3" in quick["longmemeval-session"].command
    assert not any(n.startswith("longmemeval") for n in (s.name for s in bench_all.steps(None, "o")))


def test_ratios_on_another_metric() -> None:
    systems = {
        "memstrata": {"overall": {"turn_recall@10": 0.9}, "search_ms_p95": 10.0, "search_ms_p50": 5.0},
        "bm25": {"overall": {"turn_recall@10": 0.81}, "search_ms_p95": 2.0, "search_ms_p50": 1.0},
    }
    got = peers.ratios(systems, metric="turn_recall")
    assert got["bm25"] == {"turn_recall@10": 0.9, "search_p95": 0.2, "search_p50": 0.2}
