"""BENCHMARKS.md stays runnable: every command of its shell blocks names a real benchmark, option or module."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from memstrata_bench.cli import build_parser

PAGE = Path(__file__).resolve().parents[2] / "BENCHMARKS.md"
MAKE_TARGETS = set(re.findall(r"^([\w-]+):", (PAGE.parent / "Makefile").read_text(), flags=re.MULTILINE))


def commands() -> list[list[str]]:
    found = []
    for block in re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split(" #", 1)[0].split("&&"):
                if part.strip():
                    found.append(shlex.split(part))
    return found


def test_the_page_is_short_and_names_its_history() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 400
    assert "docs/benchmarks-history.md" in text and (PAGE.parent / "docs" / "benchmarks-history.md").is_file()


@pytest.mark.parametrize("words", commands(), ids=" ".join)
def test_every_command_of_the_page_is_real(words: list[str]) -> None:
    if words[0] == "memstrata-bench":
        if words[1:] != ["--help"]:
            build_parser().parse_args(words[1:])  # exits (fails the test) on an unknown benchmark or option
    elif words[0] == "make":
        assert {w for w in words[1:] if "=" not in w} <= MAKE_TARGETS
    elif words[:2] == ["python", "-m"]:
        assert importlib.util.find_spec(words[2]) is not None, words[2]
    elif words[:2] == ["pip", "install"]:
        assert words[2:] == ["-e", "benchmarks"]
    else:
        assert words[:2] == ["bash", "benchmarks/peers/setup.sh"], f"unchecked command {words}"
        assert (PAGE.parent / words[1]).is_file()
