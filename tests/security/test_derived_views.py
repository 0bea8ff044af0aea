"""Derived views follow their source (issue 15 findings 4, 5): a LangGraph store item disappears when
its memory is forgotten and cannot silently disagree with it after a PATCH; LangMem's default
namespace ("memories", user_id) is the user's own, isolated and erased with them."""

from __future__ import annotations

import pytest

from memstrata.errors import InvalidInput
from memstrata.integrations.langgraph import MemstrataStore
from tests.security.conftest import Backend


def test_forgetting_an_items_memory_removes_the_item(backend: Backend) -> None:
    with backend.memory() as memory:
        store = MemstrataStore(memory, index={"fields": ["text", "extra"]})
        store.put(("users", "alice", "notes"), "pref", {"text": "Alice prefers tea", "extra": "green tea only"})
        [hit, *_] = memory.search("prefers tea", scope="alice", k=5)
        assert memory.forget(hit.memory.id, scope="alice")
        assert store.get(("users", "alice", "notes"), "pref") is None
        assert store.search(("users", "alice"), query="tea") == []
        assert memory.list(scope="alice") == []  # the item's other vector went with it


def test_changing_an_items_text_behind_the_store_is_refused(backend: Backend) -> None:
    with backend.memory() as memory:
        store = MemstrataStore(memory, index={"fields": ["text"]})
        store.put(("users", "alice", "notes"), "pref", {"text": "Alice prefers tea"})
        [hit] = memory.search("prefers tea", scope="alice", k=5)
        with pytest.raises(InvalidInput, match="LangGraph store item"):
            memory.update(hit.memory.id, scope="alice", content="Alice prefers coffee")
        item = store.get(("users", "alice", "notes"), "pref")
        assert item is not None and item.value == {"text": "Alice prefers tea"}


def test_langmem_default_namespace_is_per_user_and_erased(backend: Backend) -> None:
    with backend.memory() as memory:
        store = MemstrataStore(memory, index={"fields": ["content"]})
        store.put(("memories", "alice"), "m1", {"content": "Alice's PIN hint is her cat's name"})
        store.put(("memories", "bob"), "m1", {"content": "Bob likes chess"})
        assert [h.memory.content for h in memory.search("PIN hint cat", scope="alice", k=5)] != []
        assert all("Alice" not in h.memory.content for h in memory.search("PIN hint cat", scope="bob", k=5))
        memory.erase_user(scope="alice")
        assert store.get(("memories", "alice"), "m1") is None
        assert store.get(("memories", "bob"), "m1") is not None
