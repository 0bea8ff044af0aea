"""The CLI as a newcomer uses it: `--json` on every command that prints data, `--store`/`--embedder`
before or after the command, progress bars on long work, a quiet exit when the reader of a pipe goes
away, and `keys create` without `--tenant`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import Memory, cli
from memstrata.embedders.hashing import HashingEmbedder

DATA_COMMANDS = [
    "add",
    "search",
    "get",
    "list",
    "forget",
    "learn",
    "context",
    "history",
    "erase",
    "export",
    "import",
    "sweep",
    "consolidate",
    "queue status",
    "queue work",
    "keys create",
    "keys list",
    "keys revoke",
]


def subparser(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    for name in path.split():
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_every_data_command_takes_json_and_the_global_options(command: str) -> None:
    options = subparser(cli.build_parser(), command)._option_string_actions
    assert {"--json", "--store", "--embedder"} <= set(options)


def main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_global_options_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:///{tmp_path / 'after.db'}"
    code, out, _ = main(
        capsys, "add", "Alice likes tea", "--user", "alice", "--store", store, "--embedder", "hashing:64"
    )
    assert code == 0 and (tmp_path / "after.db").is_file()
    code, out, _ = main(capsys, "--embedder", "hashing:64", "list", "--user", "alice", "--json", "--store", store)
    assert [m["content"] for m in json.loads(out)["memories"]] == ["Alice likes tea"]
    # Given in both places, the one after the command wins.
    other = f"sqlite:///{tmp_path / 'other.db'}"
    code, out, _ = main(
        capsys, "--store", other, "list", "--user", "alice", "--store", store, "--embedder", "hashing:64"
    )
    assert "Alice likes tea" in out and not (tmp_path / "other.db").exists()


def test_lifecycle_commands_print_text_or_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:///{tmp_path / 'life.db'}"
    common = ["--store", store, "--embedder", "hashing:64"]
    for i in range(3):
        main(capsys, "add", f"Alice visited museum {i}", "--user", "alice", "--kind", "event", *common)
    code, out, _ = main(capsys, "consolidate", "--user", "alice", "--older-than-days", "0", "--min-count", "3", *common)
    assert code == 0 and out.startswith("3 eligible, 3 compressed into 1 summaries") and "event: 3 memories" in out
    export = tmp_path / "alice.json"
    code, out, _ = main(capsys, "export", "--user", "alice", "--out", str(export), "--json", *common)
    assert json.loads(out)["out"] == str(export) and json.loads(out)["counts"]["memories"] == 4
    code, out, _ = main(capsys, "sweep", *common)
    assert out.startswith("swept 1 user(s): 0 expired")
    code, out, _ = main(capsys, "erase", "--user", "alice", "--yes", *common)
    assert out.startswith("erased: ") and "receipt " in out and "{" not in out
    code, out, _ = main(capsys, "import", str(export), *common)
    assert out.startswith("imported into alice: 4 memories written")


def test_keys_without_tenant_use_the_default_tenant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = ["--store", f"sqlite:///{tmp_path / 'keys.db'}"]
    code, out, err = main(capsys, "keys", "create", "--user", "alice", *store)
    assert code == 0 and out.strip().startswith("msk_") and "tenant 'default'" in err
    code, out, _ = main(capsys, "keys", "create", "--name", "ops", "--json", *store)
    created = json.loads(out)
    assert created["tenant"] == "default" and created["user"] is None and created["token"].startswith("msk_")
    code, out, _ = main(capsys, "keys", "list", "--json", *store)
    assert sorted(k["user"] or "" for k in json.loads(out)) == ["", "alice"] and "token" not in out
    code, out, _ = main(capsys, "keys", "revoke", created["id"], "--json", *store)
    assert json.loads(out)["revoked_at"] is not None


def run_cli(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMSTRATA_EMBEDDER": "hashing:64"}
    return subprocess.run(
        [sys.executable, "-m", "memstrata", *argv], env=env, text=True, capture_output=True, check=False, **kwargs
    )  # type: ignore[call-overload]


@pytest.fixture
def big_store(tmp_path: Path) -> str:
    """A store with 600 memories of alice (an export of about 400 KB, more than a pipe holds)."""
    url = f"sqlite:///{tmp_path / 'big.db'}"
    with Memory(store=url, embedder=HashingEmbedder(64)) as memory:
        memory.add_many([f"Alice noted fact number {i} about her garden" for i in range(600)], scope="alice")
    return url


def test_export_into_a_closed_pipe_exits_quietly(big_store: str) -> None:
    env = {**os.environ, "MEMSTRATA_EMBEDDER": "hashing:64"}
    command = [sys.executable, "-m", "memstrata", "export", "--user", "alice", "--store", big_store]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        head = process.stdout.read(100)  # like `| head -c 100`: read a little, then go away
        process.stdout.close()
        err = process.stderr.read().decode()
        code = process.wait(timeout=60)
    assert head.startswith(b"{")
    assert code == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_import_and_consolidate_draw_progress_bars(big_store: str, tmp_path: Path) -> None:
    export = tmp_path / "alice.json"
    assert run_cli("export", "--user", "alice", "--out", str(export), "--store", big_store).returncode == 0
    target = f"sqlite:///{tmp_path / 'target.db'}"
    imported = run_cli("import", str(export), "--user", "bob", "--progress", "--store", target)
    assert imported.returncode == 0, imported.stderr
    assert "import: 100%" in imported.stderr and "600/600" in imported.stderr
    assert imported.stdout.startswith("imported into bob: 600 memories written")
    quiet = run_cli("import", str(export), "--user", "carol", "--store", target)  # stderr is not a terminal
    assert quiet.returncode == 0 and "%" not in quiet.stderr
    consolidated = run_cli(
        "consolidate", "--user", "bob", "--older-than-days", "0", "--kind", "fact", "--progress", "--store", target
    )
    assert consolidated.returncode == 0, consolidated.stderr
    assert "consolidate: 100%" in consolidated.stderr and "compressed" in consolidated.stdout
