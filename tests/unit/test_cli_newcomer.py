"""What a newcomer meets first on the command line: help on every option, `--version`, a mistyped
`--store` refused instead of read as an empty store, `memstrata mcp` without `--user` explained
before stdio starts, and progress bars that only appear when there is progress to show."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Memory, cli
from memstrata.cli.server import MCP_NEEDS_USER
from memstrata.distribution import installed_version
from memstrata.embedders.hashing import HashingEmbedder


def options(parser: argparse.ArgumentParser, path: str = "memstrata") -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in dict(action.choices).items():
                yield from options(child, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield path, action


def test_every_option_and_argument_has_help_text() -> None:
    found = list(options(cli.build_parser()))
    assert len(found) > 150  # the whole tree was walked, subcommands of subcommands included
    missing = [f"{path} {'/'.join(a.option_strings) or a.dest}" for path, a in found if not a.help]
    assert missing == []


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out == f"memstrata {installed_version()} (memstrata-ai)\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main([*argv, "--embedder", "hashing:64"])
    out, err = capsys.readouterr()
    return code, out, err


READ_COMMANDS = [
    ["search", "tea", "--user", "alice"],
    ["get", "mem-1", "--user", "alice"],
    ["list", "--user", "alice"],
    ["history", "mem-1", "--user", "alice"],
    ["context", "tea", "--user", "alice"],
    ["forget", "mem-1", "--user", "alice"],
    ["export", "--user", "alice"],
    ["erase", "--user", "alice", "--yes"],
    ["sweep"],
    ["consolidate", "--user", "alice"],
    ["compact"],
    ["queue", "status"],
    ["queue", "work"],
    ["keys", "list"],
    ["keys", "revoke", "key-1"],
    ["audit", "--tenant", "default"],
]


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=[" ".join(a[:2]) for a in READ_COMMANDS])
def test_commands_that_need_data_refuse_a_missing_store(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "memories.bd"
    code, out, err = run(capsys, *argv, "--store", f"sqlite:///{typo}")
    assert code == 2 and out == ""
    assert f"error: no store at {typo} (--store sqlite:///{typo})" in err
    assert not typo.exists()  # nothing was created


def test_the_error_names_where_the_store_url_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_STORE", f"sqlite:///{tmp_path / 'nowhere.db'}")
    code, _, err = run(capsys, "list", "--user", "alice")
    assert code == 2 and f"no store at {tmp_path / 'nowhere.db'} ($MEMSTRATA_STORE" in err
    monkeypatch.delenv("MEMSTRATA_STORE")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "search", "tea", "--user", "alice")
    assert code == 2 and "no store at .memstrata/memstrata.db (the default store" in err


def test_commands_that_write_create_the_store_and_reads_then_find_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, argv in [
        ("add", ["add", "Alice likes green tea", "--user", "alice"]),
        ("learn", ["learn", "I live in Porto.", "--user", "alice"]),
        ("keys", ["keys", "create", "--user", "alice"]),
    ]:
        path = tmp_path / f"{name}.db"
        code, _, err = run(capsys, *argv, "--store", f"sqlite:///{path}")
        assert code == 0 and path.is_file(), err
    code, out, _ = run(capsys, "list", "--user", "alice", "--json", "--store", f"sqlite:///{tmp_path / 'add.db'}")
    assert code == 0 and [m["content"] for m in json.loads(out)["memories"]] == ["Alice likes green tea"]
    code, out, _ = run(capsys, "export", "--user", "alice", "--store", f"sqlite:///{tmp_path / 'add.db'}")
    export = tmp_path / "alice.json"
    export.write_text(out)
    restored = tmp_path / "restored.db"
    code, _, err = run(capsys, "import", str(export), "--store", f"sqlite:///{restored}")
    assert code == 0 and restored.is_file(), err


def cli_process(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMSTRATA_EMBEDDER": "hashing:64"}
    return subprocess.run(
        [sys.executable, "-m", "memstrata", *argv], env=env, text=True, capture_output=True, check=False, **kwargs
    )  # type: ignore[call-overload]


def test_mcp_without_user_says_so_before_stdio_starts(tmp_path: Path) -> None:
    store = tmp_path / "mcp.db"
    initialize = '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}\n'
    done = cli_process("mcp", "--store", f"sqlite:///{store}", input=initialize, timeout=60)
    assert done.returncode == 2 and done.stdout == ""  # no MCP traffic at all: it never started
    assert done.stderr.strip() == f"error: {MCP_NEEDS_USER}"
    assert '"args": ["mcp", "--user", "alice"]' in MCP_NEEDS_USER
    assert not store.exists()


@pytest.fixture
def old_memories(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with Memory(store=url, embedder=HashingEmbedder(64)) as memory:
        memory.add_many([f"Alice visited museum number {i} in Paris" for i in range(60)], scope="alice")
    return url


def test_consolidate_bar_shows_its_total_and_advances_to_the_end(old_memories: str) -> None:
    done = cli_process(
        "consolidate",
        "--user",
        "alice",
        "--older-than-days",
        "0",
        "--kind",
        "fact",
        "--progress",
        "--store",
        old_memories,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    groups = int(done.stdout.split(" compressed into ")[1].split()[0])
    assert groups == 3
    frames = [f for f in done.stderr.replace("\r", "\n").splitlines() if f.startswith("consolidate:")]
    assert frames and all(f"/{groups} " in f for f in frames)  # every frame knows the total
    assert "100%" in frames[-1] and f"{groups}/{groups}" in frames[-1]


@pytest.mark.parametrize("options", [["--dry-run", "--older-than-days", "0"], []], ids=["dry run", "nothing eligible"])
def test_consolidate_without_work_draws_no_bar_stuck_at_zero(old_memories: str, options: list[str]) -> None:
    done = cli_process("consolidate", "--user", "alice", "--progress", *options, "--store", old_memories, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "0 compressed" in done.stdout
    assert "consolidate:" not in done.stderr and "groups" not in done.stderr
