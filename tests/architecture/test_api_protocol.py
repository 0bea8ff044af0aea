"""mypy holds `Memory`, `MemoryClient` and their async flavours to the `MemoryAPI` Protocols.

The checks run mypy on small programs: conforming code type-checks, and a misspelt method on any
of the four classes is an error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONFORMING = """
from memstrata import AsyncMemory, AsyncMemoryAPI, AsyncMemoryClient, Memory, MemoryAPI, MemoryClient

def in_process(memory: Memory) -> MemoryAPI:
    return memory

def remote(client: MemoryClient) -> MemoryAPI:
    return client

def async_in_process(memory: AsyncMemory) -> AsyncMemoryAPI:
    return memory

def async_remote(client: AsyncMemoryClient) -> AsyncMemoryAPI:
    return client

async def use(api: AsyncMemoryAPI) -> str:
    hits = await api.search("tea", scope="alice")
    return hits[0].memory.content
"""

MISSPELT = """
from memstrata import AsyncMemory, AsyncMemoryClient, Memory, MemoryClient

async def use(m: Memory, c: MemoryClient, am: AsyncMemory, ac: AsyncMemoryClient) -> None:
    m.serach("tea", scope="alice")
    c.serach("tea", scope="alice")
    await am.serach("tea", scope="alice")
    await ac.serach("tea", scope="alice")
    await am.search("tea", scope="alice", k="ten")
"""


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "program.py"
    program.write_text(source)
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--follow-imports=silent",
        "--ignore-missing-imports",
        "--no-error-summary",
        "--cache-dir",
        str(ROOT / ".mypy_cache"),
        str(program),
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_all_four_front_ends_satisfy_the_protocols(tmp_path: Path) -> None:
    result = mypy(tmp_path, CONFORMING)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_a_misspelt_method_is_a_type_error_on_every_front_end(tmp_path: Path) -> None:
    result = mypy(tmp_path, MISSPELT)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    for cls in ("Memory", "MemoryClient", "AsyncMemory", "AsyncMemoryClient"):
        assert any(f'"{cls}" has no attribute "serach"' in line for line in errors), result.stdout
    assert any('"k"' in line and "int" in line for line in errors), result.stdout
