"""A LangGraph agent whose long-term memory is memstrata.

    pip install 'memstrata-ai[langgraph]'
    python examples/langgraph_agent.py [path/to/memories.db]

Three sessions, each in a new process-like setup (a new `Memory` on the same SQLite file, a new
graph, a new thread): the preference stated in session 1 is recalled in session 3.

The graph is `recall -> respond -> remember`:

* recall:   search the user's memories in the LangGraph store (`MemstrataStore`) for the message;
* respond:  ask the chat model with those memories in the system prompt;
* remember: extract what is worth keeping from the user's message (memstrata's offline rules,
            `Memory.extract`) and `put` it in the store, one key per fact slot, so a new value replaces
            the old one ("I now prefer detailed answers" overwrites the answer-length preference).

Offline, a scripted chat model stands in for the LLM; pass any LangChain chat model to
`build_agent` (for example `ChatOpenAI(model="gpt-4o-mini")`) for real answers.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from memstrata import Memory
from memstrata.integrations.langgraph import MemstrataStore

SYSTEM_PROMPT = "You are a helpful assistant."


@dataclass
class UserContext:
    user_id: str


class State(MessagesState):
    memories: list[str]


def memory_namespace(user_id: str) -> tuple[str, ...]:
    """("users", user_id, ...) namespaces are that user's memories in memstrata."""
    return ("users", user_id, "memories")


def last_user_text(messages: list[AnyMessage]) -> str:
    return next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))


def build_agent(model: BaseChatModel, store: MemstrataStore) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent graph, with `store` as its long-term memory and an in-process checkpointer."""

    def recall(state: State, runtime: Runtime[UserContext]) -> dict[str, Any]:
        assert runtime.store is not None
        found = runtime.store.search(
            memory_namespace(runtime.context.user_id), query=last_user_text(state["messages"]), limit=3
        )
        return {"memories": [item.value["text"] for item in found]}

    def respond(state: State) -> dict[str, Any]:
        system = SYSTEM_PROMPT
        if state.get("memories"):
            system += "\n\nWhat you know about this user:\n" + "\n".join(f"- {m}" for m in state["memories"])
        return {"messages": [model.invoke([SystemMessage(system), *state["messages"]])]}

    def remember(state: State, runtime: Runtime[UserContext]) -> dict[str, Any]:
        assert runtime.store is not None
        for candidate in store.memory.extract(last_user_text(state["messages"])):
            slot = candidate.attribute or hashlib.sha256(candidate.content.encode()).hexdigest()[:16]
            runtime.store.put(
                memory_namespace(runtime.context.user_id),
                slot,
                {"text": candidate.content, "category": candidate.category},
            )
        return {}

    builder = StateGraph(State, context_schema=UserContext)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store, checkpointer=InMemorySaver())


def run_session(db: str, model: BaseChatModel, user_id: str, text: str) -> dict[str, Any]:
    """One session in a fresh setup: new Memory, store, graph and thread."""
    with Memory(store=db) as memory:
        agent = build_agent(model, MemstrataStore(memory, index={"fields": ["text"]}))
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        result: dict[str, Any] = agent.invoke(
            {"messages": [HumanMessage(text)]}, config, context=UserContext(user_id=user_id)
        )
        return result


def main(path: str | None = None) -> list[dict[str, Any]]:
    db = f"sqlite:///{path or Path(tempfile.mkdtemp()) / 'memories.db'}"
    model = GenericFakeChatModel(
        messages=iter([AIMessage("Noted: short answers."), AIMessage("Got it."), AIMessage("Briefly, then.")])
    )
    sessions = ["I prefer short answers.", "My manager is Sarah.", "How should you answer me?"]
    results = []
    for number, text in enumerate(sessions, start=1):
        result = run_session(db, model, "alice", text)
        print(f"session {number}: {text!r} -> {result['messages'][-1].content!r}; recalled {result['memories']}")
        results.append(result)
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
