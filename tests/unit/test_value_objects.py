"""`SearchFilter` and `ConsolidationOptions`: validated once, sent whole, and turned into flags for the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata import ConsolidationOptions, InvalidInput, Memory, MemoryKind, SearchFilter, cli
from memstrata.embedders.hashing import HashingEmbedder
from tests.unit.test_cli_surface import main, subparser


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        pytest.param({"kinds": ["rumour"]}, "kinds.0", id="unknown-kind"),
        pytest.param({"include_superseded": 1}, "include_superseded", id="number-for-a-flag"),
        pytest.param({"created_after": 1_700_000_000}, "created_after", id="epoch-for-a-date"),
        pytest.param({"created_after": "2024-02-01", "created_before": "2024-01-01"}, "earlier", id="reversed"),
        pytest.param({"metadata": {"bad key": 1}}, "metadata", id="metadata-key"),
        pytest.param({"metadata": {"topic": {"nested": 1}}}, "metadata", id="metadata-value"),
        pytest.param({"kind": ["fact"]}, "kind", id="unknown-field"),
    ],
)
def test_search_filter_refuses_bad_values_with_invalid_input(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        SearchFilter(**fields)  # type: ignore[arg-type]


def test_search_filter_reads_python_and_json_spellings_alike() -> None:
    from_python = SearchFilter(kinds="fact", created_after=datetime(2024, 1, 1), include_superseded=True)
    from_json = SearchFilter.model_validate(from_python.to_json())
    assert from_python == from_json
    assert from_python.kinds == (MemoryKind.FACT,) and from_python.created_after == datetime(2024, 1, 1, tzinfo=UTC)
    assert from_python.to_json() == {
        "kinds": ["fact"],
        "created_after": "2024-01-01T00:00:00Z",
        "include_superseded": True,
    }
    assert SearchFilter().to_json() == {}


def test_consolidation_options_take_a_timedelta_as_days_and_refuse_bad_values() -> None:
    assert ConsolidationOptions(older_than_days=timedelta(hours=36)).older_than_days == 1.5
    with pytest.raises(InvalidInput, match="min_count"):
        ConsolidationOptions(min_count=0)
    with pytest.raises(InvalidInput, match="older_than_days"):
        ConsolidationOptions(older_than_days=False)  # a boolean is not a number of days
    with pytest.raises(InvalidInput, match="window"):
        ConsolidationOptions(window="fortnight")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="options must be ConsolidationOptions"):
        Memory(store=":memory:", embedder=HashingEmbedder(8)).consolidate(scope="a", options={"dry_run": True})  # type: ignore[arg-type]


def test_cli_flags_are_the_value_objects_fields() -> None:
    consolidate = set(subparser(cli.build_parser(), "consolidate")._option_string_actions)
    assert {"--older-than-days", "--min-count", "--kind", "--window", "--use-llm", "--no-use-llm", "--dry-run"} <= (
        consolidate
    )
    search = set(subparser(cli.build_parser(), "search")._option_string_actions)
    assert {
        "--kind",
        "--metadata",
        "--created-after",
        "--created-before",
        "--as-of",
        "--include-superseded",
        "--include-expired",
    } <= search


def test_cli_builds_the_filter_and_the_options_from_its_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--store", f"sqlite:///{tmp_path / 'flags.db'}", "--embedder", "hashing:64"]
    main(
        capsys,
        "add",
        "Alice likes tea",
        "--user",
        "alice",
        "--kind",
        "preference",
        "--metadata",
        '{"src": "chat"}',
        *common,
    )
    for city in ("Rome", "Paris"):
        main(capsys, "add", f"Alice visited {city}", "--user", "alice", "--kind", "event", *common)
    code, out, _ = main(capsys, "list", "--user", "alice", "--metadata", '{"src": "chat"}', "--json", *common)
    assert code == 0 and [r["content"] for r in json.loads(out)["memories"]] == ["Alice likes tea"]
    code, out, _ = main(capsys, "search", "Alice", "--user", "alice", "--kind", "event", "--json", *common)
    assert sorted(h["memory"]["content"] for h in json.loads(out)["hits"]) == [
        "Alice visited Paris",
        "Alice visited Rome",
    ]
    code, out, _ = main(
        capsys,
        "consolidate",
        "--user",
        "alice",
        "--older-than-days",
        "0",
        "--min-count",
        "2",
        "--dry-run",
        "--no-use-llm",
        "--json",
        *common,
    )
    report = json.loads(out)
    assert code == 0 and report["skipped"] == "dry run" and report["compressed"] == 0
    code, _, err = main(capsys, "consolidate", "--user", "alice", "--min-count", "0", *common)
    assert code != 0 and "min_count" in err
