"""`memstrata bench`: forwards to the benchmark harness of a checkout, or says how to install it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memstrata.cli import bench, build_parser, main

HARNESS_ROOT = Path(__file__).resolve().parents[2] / "benchmarks"

LOCOMO = [
    {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten called Pixel."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I ran the Berlin marathon last spring."},
            ],
        },
        "qa": [{"question": "What is the kitten called?", "answer": "Pixel", "category": 4, "evidence": ["D1:1"]}],
    }
]


def test_the_global_options_and_every_argument_reach_the_harness() -> None:
    args = build_parser().parse_args(["--embedder", "hashing:64", "bench", "locomo", "--data", "x.json", "--json"])
    assert bench.forwarded(args) == ["--embedder", "hashing:64", "locomo", "--data", "x.json", "--json"]
    assert bench.forwarded(build_parser().parse_args(["bench"])) == ["--help"]
    assert bench.forwarded(build_parser().parse_args(["bench", "--help"])) == ["--help"]


def test_bench_runs_the_harness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "tiny-locomo.json"
    data.write_text(json.dumps(LOCOMO), encoding="utf-8")
    assert main(["--embedder", "hashing:64", "bench", "locomo", "--data", str(data), "--k", "1,10", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["benchmark"] == "locomo" and result["questions"] == 1
    assert result["embedder"].startswith("hashing")
    assert result["command"].startswith("memstrata-bench locomo")


def test_without_the_harness_bench_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != HARNESS_ROOT])
    for name in [m for m in sys.modules if m == "memstrata_bench" or m.startswith("memstrata_bench.")]:
        monkeypatch.delitem(sys.modules, name)
    assert not bench.harness_installed()
    assert main(["bench", "locomo", "--data", "x.json"]) == 2
    error = capsys.readouterr().err
    assert "not part of the memstrata package" in error and "pip install -e benchmarks" in error
