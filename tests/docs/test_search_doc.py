"""docs/search.md's example runs as written and shows what it says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.docs.test_readme import ROOT, python_blocks


def test_search_time_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    block, _ = python_blocks(ROOT / "docs" / "search.md")
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("MEMSTRATA_")]:
        monkeypatch.delenv(key)
    exec(compile(block, "docs/search.md", "exec"), {})
    first, second = capsys.readouterr().out.strip().splitlines()
    assert first == "[3, 5]"
    matches = eval(second)  # {day: time_match}: "last week" of 24 May 2023 is 15-21 May, ±3 days
    assert matches[20] == 1.0 and matches[3] == 0.0 and matches[5] == 0.0 and 0 < matches[22] < 1


def test_recorded_time_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, block = python_blocks(ROOT / "docs" / "search.md")
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("MEMSTRATA_")]:
        monkeypatch.delenv(key)
    exec(compile(block, "docs/search.md", "exec"), {})
    believed, now = capsys.readouterr().out.strip().splitlines()
    assert (believed, now) == ("['The user lives in Madrid.']", "['The user lives in Berlin.']")
