"""Seed 000's acceptance test: a preference stated in session 1 ("I prefer short answers") is in the
context of session 3 — after restarts (a new Memory on the same SQLite file for every session) —
through the LangChain adapters and through the LangGraph store."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from pydantic import Field

from memstrata import Memory, Scope
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.integrations.langchain import MemstrataChatMessageHistory, MemstrataRetriever
from memstrata.integrations.langgraph import MemstrataStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUESTION = "How should you answer me?"


class RecordingChatModel(FakeListChatModel):
    """A scripted chat model that keeps every prompt it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.prompts.append(list(messages))
        return super()._call(messages, *args, **kwargs)


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def open_memory(db: str) -> Memory:
    return Memory(store=db, embedder=HashingEmbedder(64))


def test_through_the_langchain_adapters(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'seed.db'}"
    said = {
        "s1": [HumanMessage("I prefer short answers"), AIMessage("Noted, I will keep it brief.")],
        "s2": [HumanMessage("My manager is Sarah"), AIMessage("Good to know.")],
    }
    for session, messages in said.items():
        with open_memory(db) as memory:  # a new process for every session
            history = MemstrataChatMessageHistory(session, user_id="alice", memory=memory, ttl=3600)
            history.add_messages(messages)
            memory.end_session(background=False, scope=Scope("alice", session_id=session))

    with open_memory(db) as memory:  # session 3
        # Nothing was learned from these sessions (no extraction ran): what was said lives in the
        # episodes, which the retriever returns on request.
        retriever = MemstrataRetriever(memory=memory, user_id="alice", k=3, include_episodes=True)
        history = MemstrataChatMessageHistory("s3", user_id="alice", memory=memory, ttl=3600)
        docs = retriever.invoke(QUESTION)
        assert "I prefer short answers" in [d.page_content for d in docs]
        assert docs[0].metadata["session_id"] == "s1"

        prompt = ChatPromptTemplate.from_messages(
            [
                ("system", "Relevant memories:\n{memories}"),
                MessagesPlaceholder("history"),
                ("human", "{question}"),
            ]
        )
        model = RecordingChatModel(responses=["Briefly: yes."])
        chain = prompt | model
        memories = "\n".join(d.page_content for d in docs)
        reply = chain.invoke({"memories": memories, "history": history.messages, "question": QUESTION})
        history.add_messages([HumanMessage(QUESTION), reply])

        [sent] = model.prompts
        assert "I prefer short answers" in str(sent[0].content)
        context = memory.context(QUESTION, scope=Scope("alice", session_id="s3"))
        assert "short answers" in context.text
        assert [m.content for m in history.messages] == [QUESTION, "Briefly: yes."]


def test_through_the_langgraph_store(tmp_path: Path) -> None:
    agent_example = load_example("langgraph_agent")
    db = f"sqlite:///{tmp_path / 'seed.db'}"
    model = RecordingChatModel(responses=["Noted.", "Good to know.", "Briefly: like this."])
    results = []
    for text in ["I prefer short answers", "My manager is Sarah", QUESTION]:
        with open_memory(db) as memory:  # a new Memory, store, graph and thread for every session
            agent = agent_example.build_agent(model, MemstrataStore(memory, index={"fields": ["text"]}))
            results.append(
                agent.invoke(
                    {"messages": [HumanMessage(text)]},
                    {"configurable": {"thread_id": f"thread-{len(results)}"}},
                    context=agent_example.UserContext(user_id="alice"),
                )
            )

    assert "The user prefers short answers." in results[2]["memories"]
    assert "The user prefers short answers." in str(model.prompts[2][0].content)  # the system prompt
    with open_memory(db) as memory:
        store = MemstrataStore(memory, index={"fields": ["text"]})
        assert store.get(("users", "alice", "memories"), "preference:answer_length").value == {
            "text": "The user prefers short answers.",
            "category": "preference",
        }
        assert "The user prefers short answers." in memory.context(QUESTION, scope=Scope("alice", session_id="s3")).text
