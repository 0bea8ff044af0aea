"""The seed's AgentWithMemory loop: recall -> system prompt -> summary + recent turns -> LLM -> save."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata import SearchFilter
from memstrata.errors import InvalidInput, ProviderError
from memstrata.integrations.agent import SUMMARY_PREFIX, AgentWithMemory, MemoryAgent
from memstrata.llm.scripted import ScriptedLLM
from memstrata.models import Scope

S1 = Scope("alice", session_id="s1")


def test_the_loop_recalls_prompts_and_saves_both_turns(memory: Any) -> None:
    memory.add("Alice is allergic to peanuts", scope="alice")
    llm = ScriptedLLM([lambda messages: f"reply {len(messages)}" for _ in range(14)])
    agent = AgentWithMemory(memory, scope=S1, llm=llm)
    assert agent.chat("Can you suggest a snack without peanuts?") == "reply 2"
    system, user = llm.calls[0].messages
    assert system.role == "system" and system.content.startswith("You are a helpful assistant.")
    assert "Relevant memories from past conversations:" in system.content and "allergic to peanuts" in system.content
    assert user.content == "Can you suggest a snack without peanuts?"
    assert [t.content for t in memory.recent_turns(scope=S1)] == [
        "Can you suggest a snack without peanuts?",
        "reply 2",
    ]
    agent.chat("And one for dinner?")
    roles = [m.role for m in llm.calls[1].messages]
    assert roles == ["system", "user", "assistant", "user"]  # recent turns come back as messages
    for n in range(5):  # the 11th saved turn folds 8 turns into the summary
        agent.chat(f"Question {n} about peanut-free recipes from Lisbon in 2026?")
    messages = llm.calls[-1].messages
    assert messages[1].content.startswith(SUMMARY_PREFIX) and messages[2].role == "assistant"
    assert (
        len(memory.list(scope=S1, filters=SearchFilter(kinds="episode"))) == 14
    )  # both turns of every chat are in the log
    assert len(memory.recent_turns(scope=S1)) <= 10


def test_a_plain_callable_gets_openai_style_dicts(memory: Any) -> None:
    seen: list[list[dict[str, str]]] = []

    def model(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return "Sure."

    agent = MemoryAgent(memory, scope=S1, llm=model, system_prompt="Be brief.")
    assert agent.chat("Hello") == "Sure."
    system, user = seen[0]
    assert user == {"role": "user", "content": "Hello"} and system["role"] == "system"
    assert system["content"].startswith(  # the seed's wording when nothing is recalled
        "Be brief.\n\nRelevant memories from past conversations:\nNo relevant past context found.\n\n"
    )


def test_nothing_is_saved_when_the_model_fails(memory: Any) -> None:
    agent = MemoryAgent(memory, scope=S1, llm=ScriptedLLM([ProviderError("down")]))
    with pytest.raises(ProviderError):
        agent.chat("Hello?")
    assert memory.list(scope=S1) == []
    bad = MemoryAgent(memory, scope=S1, llm=lambda messages: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(InvalidInput, match="string"):
        bad.chat("Hello?")
    with pytest.raises(InvalidInput, match="session_id"):
        MemoryAgent(memory, scope=Scope("alice"), llm=lambda messages: "x")


def test_agent_end_session_updates_the_user_context(memory: Any) -> None:
    agent = MemoryAgent(memory, scope=S1, llm=lambda messages: "Okay.")
    agent.chat("I live in Berlin and I prefer short answers.")
    context = agent.end_session(background=False)
    assert isinstance(context, dict) and any("Berlin" in f for f in context["facts"])
