"""Item namespaces: which layer keeps what in the store's per-user `items` table.

Every layer reads and writes only its own namespaces; export/import and erasure walk all of them.
"""

PROFILE = "profile"
"""Key/value profile facts; key = f"{category}:{key}", value = {category, key, value, source, updated_at}."""

USER_CONTEXT = "context"
"""The user context object (facts, preferences, last topics, open items); key = "user"."""

SESSION = "session"
"""Per-session state (rolling summary, folded turn count, ended_at); key = session_id."""

ENTITY = "entity"
"""Entities; key = normalized entity name."""

QUEUE = "queue"
"""Background work items (extraction); key = item id."""

RECEIPT = "receipt"
"""Content-free erasure receipts (kept under a reserved system user)."""

API_KEY = "apikey"
"""API keys of the server (hashes only), kept under SYSTEM_USER; key = key id."""

SYSTEM_USER = "_system"
"""Reserved owner of non-user data (API keys, erasure receipts). User ids cannot start with '_'."""

LANGGRAPH = "langgraph"
"""Items written through the LangGraph `BaseStore` adapter; key = namespace path + item key."""

LANGGRAPH_SOURCE = "langgraph"
"""`metadata["source"]` of the memories that index LangGraph items (their lifecycle is the adapter's)."""

LIFECYCLE = "lifecycle"
"""Lifecycle bookkeeping per user (turn counters of the consolidation policy)."""

ALL_USER_NAMESPACES = (PROFILE, USER_CONTEXT, SESSION, ENTITY, QUEUE, LANGGRAPH, LIFECYCLE)
