"""docs/async.md runs as written: the in-process example in a scratch directory, the client example
against a live server (its URL and a user key put in for the placeholders)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.test_code_blocks import python_of, run_blocks


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for key in ("MEMSTRATA_STORE", "MEMSTRATA_LLM"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MEMSTRATA_EMBEDDER", "hashing:64")
    monkeypatch.setenv("MEMSTRATA_BUFFER", "memory://")
    return tmp_path


def test_async_page_runs_in_process_and_against_a_live_server(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memstrata.server.app import create_app
    from memstrata.server.config import ServerConfig
    from tests.server.conftest import make_keys, open_memory, serve

    in_process, remote = python_of("async.md")
    run_blocks([in_process], {})
    assert "Alice prefers short answers" in capsys.readouterr().out
    assert (scratch / "memories.db").is_file()

    memory = open_memory(scratch / "server.db")
    keys = make_keys(memory)
    with serve(create_app(memory=memory, config=ServerConfig(auth=True))) as url:
        run_blocks([remote], {}, {"http://127.0.0.1:8420": url, "msk_...": keys.alice})
    assert "['Alice prefers short answers']" in capsys.readouterr().out
    memory.close()
