"""The frameworks are optional: importing memstrata never imports them, and an adapter whose framework
is missing says which extra to install. Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)


def test_importing_memstrata_imports_no_framework() -> None:
    done = run(
        "import sys, memstrata, memstrata.integrations, memstrata.aio\n"
        "from memstrata.integrations import langgraph_items, langgraph_query\n"
        "frameworks = ('langchain_core', 'langgraph', 'langsmith')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in frameworks)\n"
        "assert not loaded, loaded\n"
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        pytest.param("memstrata.integrations.langchain", "langchain_core", "memstrata-ai[langchain]", id="langchain"),
        pytest.param("memstrata.integrations.langgraph", "langgraph", "memstrata-ai[langgraph]", id="langgraph"),
    ],
)
def test_a_missing_framework_names_the_extra(module: str, blocked: str, extra: str) -> None:
    done = run(
        f"import sys\n"
        f"sys.modules[{blocked!r}] = None  # as if the package were not installed\n"
        f"try:\n"
        f"    import {module}\n"
        f"except ImportError as exc:\n"
        f"    print(exc)\n"
        f"else:\n"
        f"    raise SystemExit('imported without {blocked}')\n"
    )
    assert done.returncode == 0, done.stderr
    assert f"pip install '{extra}'" in done.stdout
