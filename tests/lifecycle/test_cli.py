"""`memstrata consolidate | sweep | export | import | erase` end to end, through `memstrata.cli.main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import cli
from memstrata.cli import lifecycle as lifecycle_commands


@pytest.fixture(autouse=True)
def with_lifecycle_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    if lifecycle_commands not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, lifecycle_commands))
    monkeypatch.setenv("MEMSTRATA_BUFFER", "memory://")
    monkeypatch.delenv("MEMSTRATA_LLM", raising=False)


def run(capsys: pytest.CaptureFixture[str], store: str, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--store", store, "--embedder", "hashing:64", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_consolidate_export_erase_import_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:///{tmp_path / 'cli.db'}"
    for i in range(3):
        assert run(capsys, store, "add", f"Alice visited museum {i}", "--user", "alice", "--kind", "event")[0] == 0

    code, out, _ = run(
        capsys, store, "consolidate", "--user", "alice", "--older-than-days", "0", "--min-count", "3", "--json"
    )
    report = json.loads(out)
    assert code == 0 and report["compressed"] == 3 and len(report["summaries"]) == 1

    export_file = tmp_path / "alice.json"
    code, _, err = run(capsys, store, "export", "--user", "alice", "--out", str(export_file))
    document = json.loads(export_file.read_text())
    assert code == 0 and "to " + str(export_file) in err and len(document["memories"]) == 4

    code, _, err = run(capsys, store, "erase", "--user", "alice")
    assert code == 2 and "add --yes to confirm" in err
    code, out, _ = run(capsys, store, "erase", "--user", "alice", "--yes", "--json")
    receipt = json.loads(out)
    assert code == 0 and receipt["counts"]["semantic"] == 3 and receipt["counts"]["summaries"] == 1
    assert "alice" not in out.replace(receipt["request_id"], "")

    code, out, _ = run(capsys, store, "import", str(export_file), "--json")
    assert code == 0 and json.loads(out)["memories_written"] == 4
    code, out, _ = run(capsys, store, "import", str(export_file), "--json")
    assert json.loads(out)["memories_written"] == 0

    code, out, _ = run(capsys, store, "sweep", "--json")
    assert code == 0 and json.loads(out)["users"] == 1


def test_bad_import_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:///{tmp_path / 'cli.db'}"
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "memstrata-export", "version": 9}')
    code, _, err = run(capsys, store, "import", str(broken))
    assert code == 2 and "not a valid memstrata export document" in err
    code, _, err = run(capsys, store, "import", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_every_lifecycle_command_has_help() -> None:
    parser = cli.build_parser()
    for command in ("erase", "export", "import", "sweep", "consolidate"):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([command, "--help"])
        assert exit_info.value.code == 0
