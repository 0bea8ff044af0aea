"""Every install command a reader can copy installs this project: each `pip install`, `uv pip install`
and `uv add` in README.md, docs/ and examples/ names the distribution pyproject.toml builds
(`[project].name`, with extras that `[project.optional-dependencies]` defines) or a path install of
the repository (`-e .`, `'.[dev]'`). `memstrata` on PyPI is another project, so `memstrata[...]`
anywhere a reader looks (docs, error messages) would install it."""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import cli
from memstrata.distribution import DISTRIBUTION, installed_version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
NAME: str = PROJECT["name"]
EXTRAS: set[str] = set(PROJECT["optional-dependencies"])

INSTALL = re.compile(r"\b(?:uv pip install|pip install|uv add)\b([^`\n]*)")
"""An install command and its arguments, up to the end of the line or of the inline code span."""
OPTIONS_WITH_VALUE = {"--python", "-p", "--index-url", "-i", "--extra-index-url"}
SPEC = re.compile(r"^(?P<name>[A-Za-z0-9._-]+|\.|\./)(?:\[(?P<extras>[\w,-]+)\])?$")


HISTORICAL = {"benchmarks-history.md"}
"""Pages that record past experiments as they were run (commands of their day), not instructions."""


def is_repository_directory(name: str) -> bool:
    """A directory of this repository with its own project file, such as `benchmarks` (`pip install -e benchmarks`)."""
    return (ROOT / name.rstrip("/") / "pyproject.toml").is_file()


def reader_files() -> list[Path]:
    docs = [
        p
        for p in sorted((ROOT / "docs").rglob("*"))
        if p.is_file() and p.suffix in {".md", ".txt"} and p.name not in HISTORICAL
    ]
    examples = [p for p in sorted((ROOT / "examples").rglob("*")) if p.is_file() and p.suffix != ".pyc"]
    return [ROOT / "README.md", *docs, *examples]


def install_commands() -> Iterator[tuple[str, str]]:
    for path in reader_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in INSTALL.finditer(line):
                yield f"{path.relative_to(ROOT)}:{number}", match.group(1).split(" #", 1)[0]


def install_problems(arguments: str) -> list[str]:
    """What is wrong with the package arguments of one install command ([] when each names this
    project or the repository's own directory, with defined extras)."""
    words, problems, named = shlex.split(arguments), [], 0
    skip_next = False
    for word in words:
        if skip_next or word in OPTIONS_WITH_VALUE:
            skip_next = not skip_next
            continue
        if word.startswith("-"):
            continue  # -q, -U, -e/--editable (the path follows)
        named += 1
        spec = SPEC.match(word)
        if spec is not None and spec["name"] not in {NAME, ".", "./"} and is_repository_directory(spec["name"]):
            continue
        if spec is None or spec["name"] not in {NAME, ".", "./"}:
            problems.append(f"{word!r} is not {NAME} nor a path install of the repository")
            continue
        unknown = set((spec["extras"] or "").split(",")) - EXTRAS - {""}
        if unknown:
            problems.append(f"{word!r} names extras pyproject.toml does not define: {sorted(unknown)}")
    return problems if named else [f"{arguments!r} installs nothing"]


COMMANDS = list(install_commands())


def test_the_docs_have_install_commands_to_check() -> None:
    places = {where.split(":")[0] for where, _ in COMMANDS}
    assert {"README.md", "docs/langchain.md", "docs/langgraph.md", "examples/README.md"} <= places


@pytest.mark.parametrize(("where", "arguments"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_install_command_installs_this_project(where: str, arguments: str) -> None:
    assert install_problems(arguments) == [], where


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("'memstrata[langchain]'", "'memstrata[langchain]' is not memstrata-ai"),
        ("'memstrata-ai[langchian]'", "does not define: ['langchian']"),
        ("langchain-openai", "'langchain-openai' is not memstrata-ai"),
        ("-q", "installs nothing"),
    ],
)
def test_the_checker_names_what_is_wrong(arguments: str, problem: str) -> None:
    assert any(problem in p for p in install_problems(arguments)), install_problems(arguments)


@pytest.mark.parametrize(
    "arguments", ["memstrata-ai", "'memstrata-ai[mcp,server]'", "-e '.[dev]'", "--python .venv/bin/python -e ."]
)
def test_the_checker_accepts_this_project(arguments: str) -> None:
    assert install_problems(arguments) == []


def test_no_reader_facing_text_names_the_other_project() -> None:
    """`memstrata[extra]` (docs, docstrings, error messages telling what to install) installs the
    unrelated PyPI project of that name."""
    files = [*reader_files(), *sorted((ROOT / "memstrata").rglob("*.py")), ROOT / "pyproject.toml"]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"(?<![\w-])memstrata\[", line)
    ]
    assert found == []


def test_the_library_asks_for_its_own_distribution_and_version() -> None:
    assert DISTRIBUTION == NAME
    assert installed_version() == PROJECT["version"]


def test_version_flag_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"memstrata {PROJECT['version']} ({NAME})"


def test_every_project_of_the_repository_depends_on_this_distribution() -> None:
    """`benchmarks/pyproject.toml` (and any other project file here) names memstrata by the distribution the
    repository builds: a bare `memstrata` requirement installs the unrelated PyPI project over the checkout."""
    requirement_name = re.compile(r"^[A-Za-z0-9._-]+")
    for path in sorted(ROOT.glob("*/pyproject.toml")):
        requirements = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {}).get("dependencies", [])
        names = [m.group(0) for r in requirements if (m := requirement_name.match(r))]
        wrong = [n for n in names if n.lower().replace("_", "-") in {"memstrata", "memstrata-ai"} and n != NAME]
        assert wrong == [], f"{path.relative_to(ROOT)} requires {wrong}, not {NAME}"
