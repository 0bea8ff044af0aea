"""The command line: every data command with --json, and errors mapped to exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.cli import main


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    base = ["--store", f"sqlite:///{tmp_path / 'cli.db'}", "--embedder", "hashing"]

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = main([*base, *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return invoke


def test_add_search_get_history_forget_with_json(run) -> None:
    code, out, _ = run("add", "Alice likes green tea", "--user", "alice", "--kind", "preference", "--json")
    record = json.loads(out)
    assert code == 0 and record["kind"] == "preference"
    code, out, _ = run("search", "green tea", "--user", "alice", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and hits[0]["memory"]["id"] == record["id"] and "keyword" in hits[0]["scores"]
    assert json.loads(run("get", record["id"], "--user", "alice", "--json")[1])["content"] == "Alice likes green tea"
    assert [e["event"] for e in json.loads(run("history", record["id"], "--user", "alice", "--json")[1])] == ["add"]
    assert json.loads(run("forget", record["id"], "--user", "alice", "--json")[1]) == {
        "id": record["id"],
        "forgotten": True,
    }
    code, _, err = run("get", record["id"], "--user", "alice")
    assert code == 3 and "not found" in err


def test_learn_and_context(run) -> None:
    code, out, _ = run("learn", "I moved to Lisbon last month.", "--user", "bob", "--json")
    assert code == 0 and json.loads(out)["operations"][0]["event"] == "add"
    code, out, _ = run("context", "where does bob live", "--user", "bob")
    assert code == 0 and "- location: Lisbon" in out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (("add", "", "--user", "alice"), 2, "empty"),
        (("add", "x", "--user", "bad id"), 2, "user_id"),
        (("add", "x", "--user", "alice", "--metadata", "{nope"), 2, "--metadata"),
        (("search", "x", "--user", "alice", "-k", "0"), 2, "k must"),
    ],
    ids=["empty", "bad-user", "bad-metadata", "bad-k"],
)
def test_bad_input_exits_2_with_a_clear_message(run, argv: tuple[str, ...], code: int, message: str) -> None:
    run("add", "Alice likes tea", "--user", "alice")  # the store exists: a search of a missing one is refused first
    got, _, err = run(*argv)
    assert got == code and message in err
