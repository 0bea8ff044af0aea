"""What a user installs: the wheel holds the library and its embedded model, not the benchmark harness."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = "memstrata/embedders/models/m2v-minilm-256"
MODEL_FILES = ("config.json", "embeddings.npy", "tokenizer.json", "LICENSE", "NOTICE")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from this checkout (with uv, which the Makefile installs into the venv)."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "uv", "build", "--wheel", "--out-dir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("memstrata_ai-*.whl")  # the distribution memstrata-ai, normalized
    return built


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_holds_no_benchmark_or_lab_code(wheel: Path) -> None:
    unwanted = ("memstrata/bench/", "memstrata_bench/", "benchmarks/", "lab/", "tests/")
    assert [name for name in names(wheel) if name.startswith(unwanted)] == []
    assert [name for name in names(wheel) if name.endswith((".jsonl", ".png")) or "retrieval_study" in name] == []


def test_the_wheel_holds_the_embedded_model(wheel: Path) -> None:
    assert {f"{MODEL_DIR}/{name}" for name in MODEL_FILES} <= set(names(wheel))
    with zipfile.ZipFile(wheel) as archive:
        assert archive.getinfo(f"{MODEL_DIR}/embeddings.npy").file_size > 1_000_000  # the vectors, not a pointer


def test_the_wheel_installs_only_the_memstrata_command(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert "memstrata = memstrata.cli:main" in scripts
    assert "memstrata-bench" not in scripts
    assert "memstrata/cli/bench.py" in names(wheel)  # `memstrata bench` only forwards to the harness
