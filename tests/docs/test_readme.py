"""The README's Python example runs as written (in a scratch directory)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

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
    assert "dentist" in out and "Recent conversation:" in out


def test_readme_gives_exactly_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^make \w+", setup, flags=re.MULTILINE)
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "bash .ci/run" not in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_example_keeps_the_live_conversation_for_a_user_with_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example run for a user who already has 70 memories and a 14-turn session: its
    context(max_tokens=1000) still shows the recent turns (the dentist request) and the summary."""
    import memstrata

    real = memstrata.Memory
    summaries: list[str] = []

    def with_history(*args: Any, **kwargs: Any) -> memstrata.Memory:
        memory = real(*args, **kwargs)
        for i in range(70):
            text = f"Alice asked me to remember that item {i} of her list sits on shelf {i} near the window"
            memory.add(text, scope="alice")
        session = memstrata.Scope("alice", session_id="s1")
        for i in range(13):
            role = "user" if i % 2 == 0 else "assistant"
            memory.add_message(role, f"Turn {i}: planning marathon training week {i} in Porto, pace {i}", scope=session)
        summaries.append(memory.session_summary(scope=session))
        return memory

    monkeypatch.setattr(memstrata, "Memory", with_history)
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("MEMSTRATA_")]:
        monkeypatch.delenv(key)
    namespace: dict[str, object] = {}
    for block in python_blocks(ROOT / "README.md"):
        exec(compile(block, "README.md", "exec"), namespace)
    namespace["memory"].close()  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "Recent conversation:" in out and "Remind me to call the dentist tomorrow" in out
    assert summaries[0] and "Summary of earlier in this conversation:" in out
    assert out.index("Summary of earlier") < out.index("Recent conversation:")
