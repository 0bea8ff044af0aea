"""The README's Python example runs as written (in a scratch directory)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_readme_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = python_blocks(ROOT / "README.md")
    assert blocks, "README.md has no python example"
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("MEMSTRATA_")]:
        monkeypatch.delenv(key)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    namespace["memory"].close()  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "short answers" in out
    assert "dentist" in out


def test_readme_gives_exactly_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^make \w+", setup, flags=re.MULTILINE)
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "bash .ci/run" not in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
