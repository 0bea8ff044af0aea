"""The copy-paste snippets of docs/langchain.md and docs/langgraph.md run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", ["langchain.md", "langgraph.md"])
def test_snippets_run_in_order(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(page)
    assert len(blocks) >= 1
    monkeypatch.chdir(tmp_path)  # the snippets create memories.db in the working directory
    module = types.ModuleType(f"docs_{page.replace('.', '_')}")  # a real module, as a pasted script has
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"{page}[block {number}]", "exec"), module.__dict__)
    assert (tmp_path / "memories.db").exists()
