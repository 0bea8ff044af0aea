"""One meaning per write call: `add` and `add_many` store text verbatim on every surface (Memory,
AsyncMemory, the CLI, REST and its client); only `learn` (and `add(..., infer=True)`) reconciles, and
its result says whether the LLM or the rules decided (`LearnResult.extractor`, `fallback_reason`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from memstrata import EventType, Memory, MemoryClient, SearchFilter
from memstrata.aio import AsyncMemory
from memstrata.cli import main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.llm import OpenAICompatibleLLM
from memstrata.llm.base import LLMClient
from memstrata.server.app import create_app
from memstrata.server.config import ServerConfig
from memstrata.storage.base import Store
from tests.llm.servers import API_KEY, FakeLLMServer, client_for, closed_port_url, completion, openai_server
from tests.server.conftest import serve
from tests.server.test_mcp import http_session

SAID = ["Bob works at Acme", "Bob works at Globex", "I no longer work at Acme", "I love steak", "I hate steak"]
"""Texts that `learn` would reconcile with each other (a new employer, a retraction, an opposite stance)."""


def everything(memory: Memory, user: str) -> list[str]:
    found = memory.list(scope=user, filters=SearchFilter(include_superseded=True), limit=100)
    return sorted(r.content for r in found)


def current(memory: Memory, user: str) -> list[str]:
    return sorted(r.content for r in memory.list(scope=user, limit=100))


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with openai_server() as server:
        yield server


def test_add_one_by_one_and_add_many_store_the_same_memories_and_retire_none(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    singles = [memory.add(text, scope="one") for text in SAID]
    batch = memory.add_many(SAID, scope="many")
    assert current(memory, "one") == current(memory, "many") == sorted(SAID)
    assert everything(memory, "one") == everything(memory, "many") == sorted(SAID)
    for record in [*singles, *batch]:
        assert record.valid_to is None and record.superseded_by is None
        assert [e.event for e in memory.history(record.id, scope=record.scope)] == [EventType.ADD]
    # exact duplicates are the one thing both detect: the stored memory comes back
    assert memory.add("Bob works at Acme", scope="one").id == singles[0].id
    assert memory.add_many(["Bob works at Acme"], scope="many")[0].id == batch[0].id
    assert memory.add_many(["Bob works at Acme"], scope="one")[0].id == singles[0].id


def test_learn_reconciles_what_add_stored_verbatim(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    acme = memory.add("Bob works at Acme", scope="bob")
    result = memory.learn("I joined Globex", scope="bob")
    assert [(op.event.value, op.replaced_ids) for op in result.operations] == [("supersede", (acme.id,))]
    assert current(memory, "bob") == ["The user works at Globex."]
    same = memory.add("I joined Globex", scope="bob", infer=True)  # infer=True is learn
    assert [op.event.value for op in same.operations] == ["noop"]


def test_add_with_an_llm_configured_calls_no_model_and_retires_nothing(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64), llm=client_for(llm_server)) as m:
        for text in SAID:
            m.add(text, scope="alice")
        m.add_many(SAID, scope="bob")
        assert current(m, "alice") == current(m, "bob") == sorted(SAID)
    assert llm_server.requests == []


def test_async_add_and_add_many_agree(tmp_path: Path) -> None:
    async def run() -> tuple[list[str], list[str]]:
        memory = AsyncMemory(store=f"sqlite:///{tmp_path / 'a.db'}", embedder=HashingEmbedder(64))
        for text in SAID:
            await memory.add(text, scope="one")
        await memory.add_many(SAID, scope="many")
        one = sorted(r.content for r in await memory.list(scope="one", limit=100))
        many = sorted(r.content for r in await memory.list(scope="many", limit=100))
        await memory.close()
        return one, many

    one, many = anyio.run(run)
    assert one == many == sorted(SAID)


def test_cli_add_stores_verbatim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--store", f"sqlite:///{tmp_path / 'cli.db'}", "--embedder", "hashing"]
    for text in SAID[:2]:
        assert main([*base, "add", text, "--user", "bob", "--json"]) == 0
    capsys.readouterr()
    assert main([*base, "list", "--user", "bob", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(m["content"] for m in listed["memories"]) == SAID[:2]


def test_rest_and_its_client_add_verbatim(tmp_path: Path) -> None:
    memory = Memory(store=f"sqlite:///{tmp_path / 's.db'}", embedder=HashingEmbedder(64))
    try:
        with serve(create_app(memory=memory, config=ServerConfig(auth=False))) as url, MemoryClient(url) as client:
            for text in SAID:
                client.add(text, scope="bob")
            assert sorted(r.content for r in client.list(scope="bob", limit=100)) == sorted(SAID)
            retired = client.list(scope="bob", filters=SearchFilter(include_superseded=True), limit=100)
            assert len(retired) == len(SAID)
    finally:
        memory.close()


# -- which extractor answered a learn ---------------------------------------------------------------
EXTRACTED_BERLIN = (
    '{"facts": [{"kind": "fact", "category": "identity", "content": "The user lives in Berlin.", '
    '"subject": "user", "attribute": "location", "value": "Berlin", "polarity": 1}]}'
)


def open_with(tmp_path: Path, llm: LLMClient | None) -> Memory:
    return Memory(store=f"sqlite:///{tmp_path / 'l.db'}", embedder=HashingEmbedder(64), llm=llm)


def test_learn_says_the_llm_extracted(tmp_path: Path, llm_server: FakeLLMServer) -> None:
    llm_server.script(completion(EXTRACTED_BERLIN))
    with open_with(tmp_path, client_for(llm_server)) as memory:
        result = memory.learn("I live in Berlin", scope="alice")
    assert (result.extractor, result.fallback_reason) == ("llm", None)
    assert [m.content for m in result.memories] == ["The user lives in Berlin."]


def test_learn_offline_says_the_rules_extracted(tmp_path: Path) -> None:
    with open_with(tmp_path, None) as memory:
        result = memory.learn("I live in Berlin", scope="alice")
    assert (result.extractor, result.fallback_reason) == ("rules", None)


def test_learn_with_the_llm_answering_500_says_the_rules_answered_and_why(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    with open_with(tmp_path, client_for(llm_server, max_retries=1)) as memory:  # an empty script answers 500
        result = memory.learn("I live in Berlin", scope="alice")
    assert result.extractor == "rules" and [m.content for m in result.memories] == ["The user lives in Berlin."]
    assert result.fallback_reason is not None
    assert result.fallback_reason.startswith("LLM extraction failed") and "500" in result.fallback_reason
    assert API_KEY not in result.fallback_reason


def test_learn_with_the_llm_refusing_connections_says_so(tmp_path: Path) -> None:
    llm = OpenAICompatibleLLM(f"{closed_port_url()}/v1", "m", API_KEY, max_retries=1, backoff=0.01)
    with open_with(tmp_path, llm) as memory:
        result = memory.learn("I live in Berlin", scope="alice")
    assert result.extractor == "rules" and result.memories
    assert result.fallback_reason is not None and "ConnectError" in result.fallback_reason


def test_a_reconciliation_the_rules_decided_is_reported_too(tmp_path: Path, llm_server: FakeLLMServer) -> None:
    with open_with(tmp_path, client_for(llm_server, max_retries=0)) as memory:
        llm_server.script(completion(EXTRACTED_BERLIN))
        memory.learn("I live in Berlin", scope="alice")
        llm_server.script(completion(EXTRACTED_BERLIN.replace("Berlin", "Porto")))  # then 500 for the decision
        result = memory.learn("I moved to Porto", scope="alice")
    assert result.extractor == "llm" and [op.event.value for op in result.operations] == ["supersede"]
    assert result.fallback_reason is not None and result.fallback_reason.startswith("LLM reconciliation failed")
    assert result.operations[0].fallback_reason == result.fallback_reason


def test_rest_mcp_and_the_client_carry_which_extractor_answered(tmp_path: Path, llm_server: FakeLLMServer) -> None:
    memory = open_with(tmp_path, client_for(llm_server, max_retries=0))  # the LLM answers 500 throughout
    try:
        with serve(create_app(memory=memory, config=ServerConfig(auth=False))) as url:
            with MemoryClient(url) as client:
                learned = client.learn("I live in Berlin", scope="alice")
            assert learned.extractor == "rules" and "LLM extraction failed" in (learned.fallback_reason or "")

            body = {"messages": [{"content": "I work at Globex"}]}
            rest = httpx.post(f"{url}/v1/users/alice/learn", json=body, timeout=30).json()
            assert rest["extractor"] == "rules" and rest["fallback_reason"].startswith("LLM extraction failed")
            queued = httpx.post(f"{url}/v1/users/alice/learn", json={**body, "background": True}, timeout=30).json()
            assert (queued["extractor"], queued["fallback_reason"]) == (None, None)

            async def steps(mcp: Client) -> Any:
                return await mcp.call_tool("learn", {"messages": [{"content": "I love tea"}]})

            tool = anyio.run(http_session, url, {"X-Memstrata-User": "alice"}, steps).structured_content
            assert tool["extractor"] == "rules" and tool["fallback_reason"].startswith("LLM extraction failed")
    finally:
        memory.close()
