"""LangChain's own standard tests (`langchain-tests`) for `MemstrataRetriever`: the constructor's `k`,
`k` per call, documents from `invoke` and `ainvoke`, over a real SQLite store."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.integrations.langchain import MemstrataRetriever

pytestmark = pytest.mark.anyio  # runs the suite's async tests

FACTS = [
    "Alice's manager is Sarah",
    "Alice prefers short answers",
    "Alice is learning to brew green tea",
    "Alice lives in Lisbon",
    "Alice's sister Priya works at Globex",
]


@pytest.fixture(scope="module")
def stocked_memory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("standard") / "memories.db"
    with Memory(store=f"sqlite:///{path}", embedder=HashingEmbedder(64)) as memory:
        memory.add_many(FACTS, scope="alice")
        yield memory


class TestMemstrataRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, stocked_memory: Memory) -> None:
        self.memory = stocked_memory

    @property
    def retriever_constructor(self) -> type[MemstrataRetriever]:
        return MemstrataRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "user_id": "alice"}

    @property
    def retriever_query_example(self) -> str:
        return "Who is Alice's manager?"


def test_the_standard_suite_ran_against_real_memories(stocked_memory: Memory) -> None:
    docs = MemstrataRetriever(memory=stocked_memory, user_id="alice", k=1).invoke("Who is Alice's manager?")
    assert [d.page_content for d in docs] == ["Alice's manager is Sarah"]
