"""`end_session`: the seed-004 user context object, offline and with an LLM; failures keep it intact."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

import pytest

from memstrata import namespaces
from memstrata.errors import LLMOutputError, ProviderError
from memstrata.llm.scripted import ScriptedLLM
from memstrata.models import Scope

from .conftest import T0, Clock, MemoryFactory

S1 = Scope("alice", session_id="s1")
S2 = Scope("alice", session_id="s2")


def chat(memory: Any, scope: Scope, *lines: str) -> None:
    for n, line in enumerate(lines):
        memory.add_message("user" if n % 2 == 0 else "assistant", line, scope=scope)


FIRST_SESSION = (
    "Hi! My name is Alice and I live in Berlin.",
    "Nice to meet you, Alice.",
    "I prefer short answers. I love hiking and I hate coffee.",
    "Noted.",
    "Remind me to call the dentist tomorrow.",
    "Will do.",
    "I'm planning a hiking trip to the Alps; the hiking boots I bought are too small.",
    "Hiking in the Alps sounds great.",
)


def test_end_session_builds_the_context_object_offline(memory: Any, clock: Clock) -> None:
    empty = {"facts": [], "preferences": {}, "last_topics": [], "open_items": [], "last_session": None}
    assert memory.user_context(scope="alice") == {"user_id": "alice", **empty}
    chat(memory, S1, *FIRST_SESSION)
    assert memory.user_context(scope="alice")["last_session"] is None  # turns never touch it
    clock.advance(hours=1)
    context = memory.end_session(scope=S1)
    assert context == memory.user_context(scope=S1)
    # the wording comes from the rule extractor; what matters is what was captured
    assert any("Alice" in f and "name" in f for f in context["facts"])
    assert any("Berlin" in f for f in context["facts"])
    assert {"answer_length": "short", "hiking": "likes", "coffee": "dislikes"}.items() <= context["preferences"].items()
    [item] = context["open_items"]
    assert "call the dentist" in item and "3 March 2026" in item  # "tomorrow" resolved at the message time
    assert context["last_topics"][0] == "hiking" and len(context["last_topics"]) == 3
    assert context["last_session"] == (T0.replace(hour=10)).isoformat()
    stored = memory.store.get_item("alice", namespaces.USER_CONTEXT, "user")
    assert stored is not None and stored.value == context
    assert memory.store.get_item("alice", namespaces.SESSION, "s1").value["ended_at"] == context["last_session"]


def test_a_later_session_resolves_open_items_and_keeps_facts(memory: Any, clock: Clock) -> None:
    chat(memory, S1, *FIRST_SESSION)
    memory.end_session(scope=S1)
    clock.advance(days=1)
    chat(
        memory,
        S2,
        "I called the dentist this morning, all sorted.",
        "Great.",
        "Follow up on my passport renewal next week.",
    )
    context = memory.end_session(scope=S2)
    assert not any("dentist" in item for item in context["open_items"])
    assert any("passport" in item for item in context["open_items"])
    assert any("Berlin" in f for f in context["facts"])
    again = memory.end_session(scope=S2)  # nothing new since the last end: unchanged
    assert again == context


def test_end_session_in_the_background_returns_a_future(memory: Any) -> None:
    chat(memory, S1, *FIRST_SESSION)
    future = memory.end_session(background=True, scope=S1)
    assert isinstance(future, Future)
    context = future.result(timeout=30)
    assert context == memory.user_context(scope="alice") and context["open_items"]
    assert memory.recent_turns(scope=S1)[-1].content == FIRST_SESSION[-1]  # the session can resume from the log


def llm_answer(**change: Any) -> str:
    return json.dumps(
        {
            "facts_add": [],
            "preferences_set": {},
            "last_topics": [],
            "open_items_add": [],
            "open_items_done": [],
            **change,
        }
    )


def test_llm_update_uses_the_prompt_and_caps_facts(make_memory: MemoryFactory) -> None:
    facts = [f"Fact number {i}" for i in range(25)]
    llm = ScriptedLLM(
        [
            llm_answer(
                facts_add=facts,
                preferences_set={"contact_time": "Tuesday afternoon"},
                last_topics=["alps", "hiking", "dentist", "extra"],
                open_items_add=["call the dentist"],
            )
        ]
    )
    memory = make_memory(llm=llm)
    chat(memory, S1, *FIRST_SESSION)
    assert llm.calls == []  # no LLM work during the turns (no fold yet)
    context = memory.end_session(scope=S1)
    call = llm.calls[0]
    assert call.json_mode and "Today is 2026-03-02 (Monday)" in call.prompt and "call the dentist" in call.prompt
    assert "Facts learned this session:\n0. " in call.prompt  # rule-extracted facts are offered to the model
    assert context["facts"] == facts[-20:]  # at most 20, the oldest dropped
    assert context["preferences"] == {"contact_time": "Tuesday afternoon"}
    assert context["last_topics"] == ["alps", "hiking", "dentist"]
    assert context["open_items"] == ["call the dentist"]


@pytest.mark.parametrize(
    "failure", [ProviderError("model down"), "I cannot help with that."], ids=["provider-error", "not-json"]
)
def test_a_failed_update_keeps_the_previous_context(make_memory: MemoryFactory, failure: Any) -> None:
    llm = ScriptedLLM([llm_answer(facts_add=["Alice lives in Berlin."], open_items_add=["call the dentist"])])
    memory = make_memory(llm=llm)
    chat(memory, S1, *FIRST_SESSION)
    before = memory.end_session(scope=S1)
    chat(memory, S2, "Actually I moved to Munich.", "Noted.")
    llm.add(failure)
    with pytest.raises((ProviderError, LLMOutputError)):
        memory.end_session(scope=S2)
    assert memory.user_context(scope="alice") == before
    llm.add(llm_answer(facts_add=["Alice lives in Munich."]))
    after = memory.end_session(scope=S2)  # a failed end can be retried
    assert after["facts"] == ["Alice lives in Berlin.", "Alice lives in Munich."]


def test_a_failed_background_update_reports_on_the_future(make_memory: MemoryFactory) -> None:
    llm = ScriptedLLM([ProviderError("model down")])
    memory = make_memory(llm=llm)
    chat(memory, S1, "I live in Berlin.")
    future = memory.end_session(background=True, scope=S1)
    assert isinstance(future.exception(timeout=30), ProviderError)
    assert memory.user_context(scope="alice")["last_session"] is None
