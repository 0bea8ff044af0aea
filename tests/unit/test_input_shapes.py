"""Python inputs a newcomer writes first: strings to add_many, `~` and malformed SQLite URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import ConfigurationError, InvalidInput
from memstrata.layers.semantic import NewMemory, as_new_memories
from memstrata.storage import sqlite_path


def test_add_many_takes_strings_dicts_and_new_memories() -> None:
    with Memory(store=":memory:", embedder=HashingEmbedder(64)) as memory:
        records = memory.add_many(
            [
                "Alice likes tea",
                {"content": "Alice runs on Sundays", "kind": "preference"},
                NewMemory(content="Alice's sister is Priya"),
            ],
            scope="alice",
        )
        assert [r.content for r in records] == ["Alice likes tea", "Alice runs on Sundays", "Alice's sister is Priya"]
        assert [r.kind.value for r in records] == ["fact", "preference", "fact"]
        assert len(memory.list(scope="alice")) == 3


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([42], "item 0 is a int"),
        (["ok", {"text": "no content key"}], "item 1: unknown fields ['text']"),
        ([{"kind": "fact"}], "item 0: no 'content'"),
        ("Alice likes tea", "takes a list of memories, not str"),
    ],
)
def test_add_many_names_the_bad_item(items: object, message: str) -> None:
    with Memory(store=":memory:", embedder=HashingEmbedder(64)) as memory:
        with pytest.raises(InvalidInput, match=message.replace("[", r"\[").replace("]", r"\]")):
            memory.add_many(items, scope="alice")  # type: ignore[arg-type]
        assert memory.list(scope="alice") == []  # nothing half-stored


def test_a_bare_string_is_not_a_batch() -> None:
    with pytest.raises(InvalidInput, match="takes a list of memories, not str"):
        as_new_memories("Alice likes tea")


def test_sqlite_url_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert sqlite_path("sqlite:///~/x.db") == str(tmp_path / "x.db")
    assert sqlite_path("~/y.db") == str(tmp_path / "y.db")
    with Memory(store="sqlite:///~/mem.db", embedder=HashingEmbedder(64)) as memory:
        memory.add("Alice likes tea", scope="alice")
    assert (tmp_path / "mem.db").is_file() and not (Path.cwd() / "~").exists()


def test_sqlite_url_forms() -> None:
    assert sqlite_path("sqlite:///rel/x.db") == "rel/x.db"
    assert sqlite_path("sqlite:////abs/x.db") == "/abs/x.db"
    assert sqlite_path("sqlite://") == ":memory:" and sqlite_path(":memory:") == ":memory:"


def test_malformed_sqlite_url_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="write sqlite:///memories.db"):
        Memory(store="sqlite:memories.db", embedder=HashingEmbedder(64))
    assert list(tmp_path.iterdir()) == []
