"""Every fenced block of README.md and docs/*.md is checked, so the docs stay true:

* python — run (here, or in order with its page in tests/docs/test_readme.py and
  tests/integrations/test_docs.py); placeholders a reader fills in (a server URL, an API key, a
  database URL, their own LLM call) are given real values;
* sh/bash — each `memstrata ...` line parses with the real CLI, each `make X` is a Makefile target,
  each `pip install 'memstrata-ai[extra]'` names a real extra;
* json — parses (an export document as one); sql — names only functions and tables the Postgres schema defines;
* the architecture tree — every module and package it names exists.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import cli
from memstrata.embedders.hashing import HashingEmbedder
from tests.docs.test_install_lines import install_problems

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
RUN_WITH_THEIR_PAGE = {"README.md", "langchain.md", "langgraph.md"}
"""Pages whose python blocks run in order in test_readme.py / tests/integrations/test_docs.py."""


def blocks(language: str | None = None) -> Iterator[Any]:
    for page in PAGES:
        for number, match in enumerate(BLOCK.finditer(page.read_text(encoding="utf-8")), start=1):
            if language is None or match.group(1) == language:
                yield pytest.param(page.name, match.group(2), id=f"{page.name}-{number}")


CHECKED = {"python", "sh", "bash", "json", "sql", ""}


@pytest.mark.parametrize(("page", "body"), list(blocks()))
def test_every_block_has_a_checker(page: str, body: str) -> None:
    language = next(m.group(1) for m in BLOCK.finditer((_path(page)).read_text()) if m.group(2) == body)
    assert language in CHECKED, f"{page}: no test checks ```{language} blocks"


def _path(name: str) -> Path:
    return next(p for p in PAGES if p.name == name)


# -- shell --------------------------------------------------------------------------------------
def shell_commands(body: str) -> Iterator[list[str]]:
    for line in body.splitlines():
        words = shlex.split(line.split(" #", 1)[0])
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]  # VAR=value prefixes
        if words:
            yield words


@pytest.mark.parametrize(("page", "body"), [*blocks("sh"), *blocks("bash")])
def test_shell_blocks_name_real_commands(page: str, body: str) -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.MULTILINE))
    for words in shell_commands(body):
        if words[0] == "make":
            assert set(words[1:]) <= targets, f"{page}: {words}"
        elif words[:2] == ["pip", "install"]:
            assert install_problems(shlex.join(words[2:])) == [], f"{page}: {words}"
        elif words[:2] == ["docker", "compose"]:
            check_compose_command(page, words[2:])
        elif words[0] == "cp":
            assert (ROOT / words[1]).is_file(), f"{page}: {words}"
        else:
            assert words[0] == "memstrata", f"{page}: unchecked command {words}"
            cli.build_parser().parse_args(words[1:])  # exits (fails the test) on a wrong option


def check_compose_command(page: str, words: list[str]) -> None:
    """`docker compose up/logs/exec ...` names services of compose.yaml; a `memstrata` command run in a
    service parses with the real CLI."""
    import yaml

    services = set(yaml.safe_load((ROOT / "compose.yaml").read_text())["services"])
    assert words[0] in {"up", "down", "logs", "exec", "ps", "build", "pull", "restart"}, f"{page}: {words}"
    if words[0] == "exec":  # exec SERVICE COMMAND...
        assert words[1] in services, f"{page}: {words}"
        if words[2] == "memstrata":
            cli.build_parser().parse_args(words[3:])
    else:
        assert {w for w in words[1:] if not w.startswith("-")} <= services, f"{page}: {words}"


# -- json, sql, the architecture tree ------------------------------------------------------------
@pytest.mark.parametrize(("page", "body"), list(blocks("json")))
def test_json_blocks_parse(page: str, body: str) -> None:
    value = json.loads(body.replace("[ ... ]", "[]"))  # `[ ... ]` marks an elided list
    if page == "export-format.md":
        from memstrata.export_format import parse_document

        assert parse_document(value).format == "memstrata-export"


@pytest.mark.parametrize(("page", "body"), list(blocks("sql")))
def test_sql_blocks_name_schema_objects(page: str, body: str) -> None:
    schema = "\n".join(p.read_text() for p in (ROOT / "memstrata" / "storage").rglob("*.py"))
    named = set(re.findall(r"\b(match_memories|hybrid_memory_search|memstrata_\w+)\(", body))
    named |= set(re.findall(r"create_\w+_table\('(\w+)'", body))
    for name in named:
        assert re.search(rf"\b{name}\b", schema), f"{page}: {name} is not in memstrata's Postgres schema"


@pytest.mark.parametrize(("page", "body"), list(blocks("")))
def test_architecture_tree_names_real_modules(page: str, body: str) -> None:
    for line in body.splitlines()[1:]:
        for name in re.findall(r"([\w]+(?:\.py|/))", line.split("  ")[1] if line.startswith("  ") else ""):
            assert (ROOT / "memstrata" / name).exists(), f"{page}: memstrata/{name} does not exist"


# -- python -----------------------------------------------------------------------------------------
def python_of(page: str) -> list[str]:
    return [body for _, body in (p.values for p in blocks("python") if p.values[0] == page)]


def test_python_blocks_are_all_run() -> None:
    pages = {p.values[0] for p in blocks("python")}
    # search.md runs in tests/docs/test_search_doc.py, async.md in tests/docs/test_async_doc.py
    others = {"conversation.md", "privacy.md", "server.md", "postgres.md", "search.md", "async.md"}
    assert pages <= RUN_WITH_THEIR_PAGE | others


def run_blocks(sources: list[str], namespace: dict[str, Any], replace: dict[str, str] | None = None) -> None:
    for number, source in enumerate(sources, start=1):
        for old, new in (replace or {}).items():
            source = source.replace(old, new)
        exec(compile(source, f"block {number}", "exec"), namespace)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTRATA_EMBEDDER", "hashing:64")
    monkeypatch.delenv("MEMSTRATA_STORE", raising=False)
    monkeypatch.delenv("MEMSTRATA_LLM", raising=False)
    monkeypatch.setenv("MEMSTRATA_BUFFER", "memory://")
    return tmp_path


def test_conversation_page_runs(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"my_openai_call": lambda messages: "Here is an outline: 1. Results 2. Risks"}
    run_blocks(python_of("conversation.md"), namespace)
    assert namespace["reply"].startswith("Here is an outline")
    assert "Q3 report" in capsys.readouterr().out
    namespace["memory"].close()


def test_privacy_page_runs(scratch: Path) -> None:
    from memstrata import Memory
    from memstrata.llm.base import ChatMessage, LLMResponse

    class Echo:  # the reader's remote LLM: answers with what it was sent, and remembers it
        def __init__(self) -> None:
            self.seen: list[str] = []

        def complete(self, messages: Any, **kwargs: Any) -> LLMResponse:
            self.seen += [m.content for m in messages]
            return LLMResponse(text=messages[-1].content, input_tokens=1, output_tokens=1, model="echo")

        def close(self) -> None:
            pass

    remote = Echo()
    namespace: dict[str, Any] = {"Memory": Memory, "remote_embedder": HashingEmbedder(64), "remote_llm": remote}
    run_blocks(python_of("privacy.md"), namespace)
    memory = namespace["memory"]
    answer = memory.llm.complete([ChatMessage(role="user", content="Mail alice@example.com")])
    assert "alice@example.com" not in " ".join(remote.seen)  # the remote side never saw it
    assert "alice@example.com" in answer.text  # restored in the answer
    memory.close()


def test_server_page_client_runs_against_a_live_server(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memstrata.server.app import create_app
    from memstrata.server.config import ServerConfig
    from tests.server.conftest import make_keys, open_memory, serve

    memory = open_memory(scratch / "server.db")
    keys = make_keys(memory)
    with serve(create_app(memory=memory, config=ServerConfig(auth=True))) as url:
        run_blocks(python_of("server.md"), {}, {"http://127.0.0.1:8420": url, "msk_...": keys.alice})
    assert "Alice prefers short answers" in capsys.readouterr().out
    memory.close()


@pytest.mark.postgres
def test_postgres_page_opens_a_store() -> None:
    from tests.support.pg import postgres_urls

    with postgres_urls() as (app_url, owner_url):
        namespace: dict[str, Any] = {}
        replace = {
            '"postgresql://memstrata_app:...@db/memstrata"': repr(app_url),
            '"postgresql://memstrata_owner:...@db/memstrata"': repr(owner_url),
        }
        run_blocks(python_of("postgres.md"), namespace, replace)
        store = namespace["store"]
        assert store.user_ids(limit=1) == []
        store.close()
