"""Derived views follow their source memory: a LangGraph store item indexed by memories is removed
when one of them is forgotten, and its indexed text cannot be changed behind the item's back.

A LangGraph item (integrations/langgraph_items.py) keeps its value in an item document and one NOTE
memory per indexed text (`metadata["source"] == "langgraph"`). Forgetting such a memory through
memstrata would leave `store.get/search` returning the text; changing its content would leave the
stored value and its vector disagreeing. So a forget removes the whole item (document and vectors),
and a content change is refused with a message saying where to make it.
"""

from __future__ import annotations

from ..errors import InvalidInput
from ..models import MemoryRecord
from ..namespaces import LANGGRAPH as ITEM_NAMESPACE
from ..namespaces import LANGGRAPH_SOURCE as SOURCE
from ..storage.base import Store

_ALL = 1_000_000_000


def is_item_vector(record: MemoryRecord) -> bool:
    return record.metadata.get("source") == SOURCE


def refuse_content_change(record: MemoryRecord) -> None:
    if is_item_vector(record):
        raise InvalidInput(
            f"memory {record.id} indexes a LangGraph store item ({record.metadata.get('langgraph_key')!r}); "
            "change the item through the store (put), which re-indexes it"
        )


def drop_item_of(store: Store, user_id: str, record: MemoryRecord) -> None:
    """Delete the LangGraph item that `record` indexes (its document and its other vectors)."""
    if not is_item_vector(record):
        return
    for item in store.list_items(user_id, ITEM_NAMESPACE, limit=_ALL):
        vector_ids = [str(v) for v in item.value.get("vector_ids") or ()]
        if record.id in vector_ids:
            store.delete(user_id, [v for v in vector_ids if v != record.id])
            store.delete_item(user_id, ITEM_NAMESPACE, item.key)
            return
