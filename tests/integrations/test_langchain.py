"""The LangChain adapters with the real langchain-core: chat history and retriever, sync and async."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memstrata import InvalidInput, Memory, SearchFilter
from memstrata.aio import AsyncMemory
from memstrata.buffer import Turn
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.integrations.langchain import (
    MemstrataChatMessageHistory,
    MemstrataRetriever,
    live_tail,
    to_turn_dict,
)
from tests.conftest import service_missing
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memories.db'}"


@pytest.fixture
def memory(db: str, clock: Clock) -> Iterator[Any]:
    with Memory(store=db, embedder=HashingEmbedder(64), clock=clock) as memory:
        yield memory


def history(memory: Any, session: str = "s1", **kwargs: Any) -> MemstrataChatMessageHistory:
    return MemstrataChatMessageHistory(session, user_id="alice", memory=memory, **kwargs)


# -- chat history --------------------------------------------------------------------------------
def test_messages_round_trip_with_episode_ids(memory: Any) -> None:
    chat = history(memory)
    chat.add_messages([SystemMessage("Be brief."), HumanMessage("I prefer short answers", name="Alice")])
    chat.add_ai_message("Noted.")
    chat.add_user_message("What is my name?")
    messages = chat.messages
    assert [(type(m), m.content) for m in messages] == [
        (SystemMessage, "Be brief."),
        (HumanMessage, "I prefer short answers"),
        (AIMessage, "Noted."),
        (HumanMessage, "What is my name?"),
    ]
    assert messages[1].name == "Alice"
    episode_ids = {r.id for r in memory.list(scope="alice", filters=SearchFilter(kinds="episode"))}
    assert {m.id for m in messages} == episode_ids
    assert history(memory, "s2").messages == []  # another session
    assert MemstrataChatMessageHistory("s1", user_id="bob", memory=memory).messages == []  # another user


def test_history_survives_a_restart(db: str) -> None:
    with Memory(store=db, embedder=HashingEmbedder(64)) as first:
        history(first).add_messages([HumanMessage("hello"), AIMessage("hi there")])
    with Memory(store=db, embedder=HashingEmbedder(64)) as second:
        assert [m.content for m in history(second).messages] == ["hello", "hi there"]


def test_window_mode_returns_the_summary_and_recent_turns(memory: Any) -> None:
    chat = history(memory, history="window")
    full = history(memory)
    for n in range(12):
        chat.add_messages([HumanMessage(f"Question number {n} is about tea variety {n}")])
    messages = chat.messages
    assert isinstance(messages[0], SystemMessage)
    assert messages[0].content == memory.session_summary(scope=memory_scope())
    assert [m.content for m in messages[1:]] == [t.content for t in memory.recent_turns(scope=memory_scope())]
    assert len(messages) - 1 <= memory.settings.window_size
    assert len(full.messages) == 12  # "session" mode keeps every message


def memory_scope() -> Any:
    from memstrata import Scope

    return Scope("alice", session_id="s1")


def test_ttl_expires_an_idle_session_but_keeps_its_episodes(memory: Any, clock: Clock) -> None:
    chat = history(memory, ttl=3600)
    chat.add_messages([HumanMessage("I prefer short answers"), AIMessage("Noted.")])
    clock.advance(minutes=59)
    assert len(chat.messages) == 2
    clock.advance(minutes=2)
    assert chat.messages == []
    chat.add_user_message("Back again")
    assert [m.content for m in chat.messages] == ["Back again"]
    assert [m.content for m in history(memory).messages] == ["I prefer short answers", "Noted.", "Back again"]
    assert memory.search("short answers", scope="alice")[0].memory.content == "I prefer short answers"


def test_ttl_in_window_mode_empties_an_idle_session(memory: Any, clock: Clock) -> None:
    chat = history(memory, ttl=60, history="window")
    chat.add_user_message("hello")
    assert len(chat.messages) == 1
    clock.advance(seconds=61)
    assert chat.messages == []


def test_clear_deletes_the_sessions_messages(memory: Any) -> None:
    chat = history(memory)
    chat.add_messages([HumanMessage("my secret project is Falcon"), AIMessage("ok")])
    history(memory, "other").add_user_message("keep this one about Falcon")
    chat.clear()
    assert chat.messages == []
    assert [h.memory.content for h in memory.search("Falcon", scope="alice", strategy="keyword")] == [
        "keep this one about Falcon"
    ]


def test_async_methods(memory: Any) -> None:
    async def main() -> None:
        chat = history(AsyncMemory(memory))
        await chat.aadd_messages([HumanMessage("hello"), AIMessage("hi")])
        assert [m.content for m in await chat.aget_messages()] == ["hello", "hi"]
        await chat.aclear()
        assert await chat.aget_messages() == []

    anyio.run(main)


def test_tool_messages_are_kept_as_text() -> None:
    call = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}])
    assert to_turn_dict(call) == {
        "role": "assistant",
        "content": '[tool calls] weather({"city": "Paris"})',
        "speaker": None,
    }
    result = ToolMessage("sunny", tool_call_id="c1", name="weather")
    assert to_turn_dict(result)["content"] == "[tool result weather] sunny"
    blocks = HumanMessage(
        content=[
            {"type": "text", "text": "look at "},
            {"type": "image_url", "image_url": {"url": "x"}},
            "this",
        ]
    )
    assert to_turn_dict(blocks)["content"] == "look at this"


def test_empty_messages_and_bad_arguments_are_invalid_input(memory: Any) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        history(memory).add_messages([AIMessage("")])
    with pytest.raises(InvalidInput, match="ttl"):
        history(memory, ttl=-1)
    with pytest.raises(InvalidInput, match="history"):
        history(memory, history="all")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="session_id"):
        MemstrataChatMessageHistory("bad session id", user_id="alice", memory=memory)
    with pytest.raises(InvalidInput, match="either"):
        MemstrataChatMessageHistory("s1", user_id="alice", memory=memory, store="sqlite:///x.db")


def test_opened_from_urls_like_redis_chat_message_history(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'urls.db'}"
    chat = MemstrataChatMessageHistory(
        "s1", user_id="alice", store=url, buffer="memory://", embedder="hashing", ttl=3600
    )
    try:
        chat.add_messages([HumanMessage("hello"), AIMessage("hi")])
        assert chat.memory._layers.conversation.buffer.ttl_seconds == 3600
    finally:
        chat.close()
    reopened = MemstrataChatMessageHistory("s1", user_id="alice", store=url, embedder="hashing")
    try:
        assert [m.content for m in reopened.messages] == ["hello", "hi"]
    finally:
        reopened.close()


@pytest.mark.redis
def test_two_processes_share_a_session_through_the_redis_buffer(tmp_path: Path) -> None:
    redis = pytest.importorskip("redis")
    redis_url = os.environ.get("MEMSTRATA_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    client = redis.Redis.from_url(redis_url, decode_responses=True, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.exceptions.RedisError as exc:
        client.close()
        service_missing(f"Redis at {redis_url} is not reachable: {exc}")
    prefix = f"memstrata-test-{tmp_path.name}:"
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    buffer = f"{redis_url}?prefix={prefix}"
    chats = [
        MemstrataChatMessageHistory("s1", user_id="alice", store=url, buffer=buffer, embedder="hashing", ttl=60)
        for _ in range(2)
    ]
    try:
        chats[0].add_messages([HumanMessage("from the first worker")])
        chats[1].add_messages([AIMessage("from the second worker")])
        for chat in chats:
            assert [m.content for m in chat.messages] == ["from the first worker", "from the second worker"]
        keys = list(client.scan_iter(f"{prefix}*"))
        assert keys and all(0 < client.ttl(k) <= 60 for k in keys if ":session:" in k)
    finally:
        for chat in chats:
            chat.close()
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
        client.close()


def test_live_tail_cuts_at_the_last_idle_gap() -> None:
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    turns = [Turn("user", str(m), t0 + timedelta(minutes=m)) for m in (0, 1, 30, 31, 90)]
    assert [t.content for t in live_tail(turns, t0 + timedelta(minutes=91), 20 * 60)] == ["90"]
    assert [t.content for t in live_tail(turns, t0 + timedelta(minutes=91), 60 * 60)] == [
        "0",
        "1",
        "30",
        "31",
        "90",
    ]
    assert live_tail(turns, t0 + timedelta(minutes=200), 60 * 60) == []
    assert len(live_tail(turns, t0, None)) == 5


# -- retriever -----------------------------------------------------------------------------------
@pytest.fixture
def stocked(memory: Any, clock: Clock) -> Any:
    memory.add("Alice prefers short answers", scope="alice", kind="preference")
    memory.add("Alice's manager is Sarah", scope="alice", metadata={"topic": "work"})
    memory.add("Alice is learning to brew green tea", scope="alice", kind="event")
    memory.add("Bob prefers long answers", scope="bob", kind="preference")
    return memory


def test_retriever_returns_documents_with_ids_and_scores(stocked: Any) -> None:
    retriever = MemstrataRetriever(memory=stocked, user_id="alice", k=2)
    docs = retriever.invoke("how long should answers be?")
    assert all(isinstance(d, Document) for d in docs)
    assert docs[0].page_content == "Alice prefers short answers"
    top = docs[0].metadata
    assert docs[0].id == top["memory_id"]
    assert stocked.get(top["memory_id"], scope="alice").content == docs[0].page_content
    assert top["kind"] == "preference" and top["user_id"] == "alice"
    assert top["score"] > 0 and {"semantic", "keyword", "hybrid"} <= set(top["scores"])
    assert len(docs) <= 2
    assert all("Bob" not in d.page_content for d in docs)


def test_retriever_returns_the_fact_not_the_chat_that_asked_for_it(stocked: Any) -> None:
    chat = history(stocked)
    chat.add_messages([HumanMessage("Who is my manager?"), AIMessage("I don't know yet: who is your manager?")])
    retriever = MemstrataRetriever(memory=stocked, user_id="alice", k=2)
    docs = retriever.invoke("Who is my manager?")
    assert docs[0].page_content == "Alice's manager is Sarah"
    assert all(d.metadata["kind"] != "episode" for d in docs)
    with_episodes = retriever.invoke("Who is my manager?", include_episodes=True)
    assert with_episodes[0].page_content == "Who is my manager?" and with_episodes[0].metadata["kind"] == "episode"
    only_episodes = MemstrataRetriever(memory=stocked, user_id="alice", kinds=["episode"]).invoke("manager")
    assert {d.metadata["kind"] for d in only_episodes} == {"episode"}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({"strategy": "keyword"}, ["Alice's manager is Sarah"], id="keyword"),
        pytest.param({"kinds": ["event"]}, ["Alice is learning to brew green tea"], id="kinds"),
        pytest.param({"metadata_filter": {"topic": "work"}}, ["Alice's manager is Sarah"], id="metadata"),
        pytest.param({"strategy": "semantic", "threshold": 0.99}, [], id="threshold"),
    ],
)
def test_retriever_options(stocked: Any, options: dict[str, Any], expected: list[str]) -> None:
    retriever = MemstrataRetriever(memory=stocked, user_id="alice", **options)
    assert [d.page_content for d in retriever.invoke("who is the manager Sarah?")][: len(expected) or None] == expected


def test_time_weighted_strategy_favours_recently_accessed_memories(stocked: Any, clock: Clock) -> None:
    old, new = stocked.add("tea note one", scope="alice"), None
    clock.advance(hours=500)
    new = stocked.add("tea note two", scope="alice")
    retriever = MemstrataRetriever(memory=stocked, user_id="alice", strategy="time_weighted", decay_rate=0.01)
    docs = retriever.invoke("tea note", kinds=["fact"])
    assert [d.id for d in docs][:2] == [new.id, old.id]
    assert "recency" in docs[0].metadata["scores"]


def test_retriever_per_call_options_async_and_batch(stocked: Any) -> None:
    retriever = MemstrataRetriever(memory=AsyncMemory(stocked), user_id="alice", k=3)
    assert len(retriever.invoke("Alice", k=1)) == 1

    async def main() -> list[Document]:
        return await retriever.ainvoke("short answers")

    assert anyio.run(main)[0].page_content == "Alice prefers short answers"
    batched = retriever.batch(["manager Sarah", "green tea"])
    assert [b[0].page_content for b in batched] == [
        "Alice's manager is Sarah",
        "Alice is learning to brew green tea",
    ]
    with pytest.raises(InvalidInput, match="unknown retriever option"):
        retriever.invoke("x", nope=1)


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"user_id": "not valid!"}, id="user"),
        pytest.param({"user_id": "alice", "strategy": "psychic"}, id="strategy"),
        pytest.param({"user_id": "alice", "kinds": ["gossip"]}, id="kind"),
    ],
)
def test_retriever_validates_its_fields(memory: Any, fields: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        MemstrataRetriever(memory=memory, **fields)
