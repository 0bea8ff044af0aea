"""How LangGraph store items live in memstrata (pure: no I/O, no LangGraph import).

Mapping (see docs/langgraph.md):

* **Owner.** A namespace `(label, user_id, *rest)` whose first label is one of the store's user
  labels (default `("users", "memories")`, the latter LangMem's default) belongs to memstrata user
  `user_id`: isolation, `erase_user` and
  `export_user` cover it. Every other namespace belongs to the reserved shared user `_langgraph`,
  which no end user can address.
* **Document.** Each item is one JSON document in the owner's `items` table, namespace
  `ITEM_NAMESPACE`, key = the JSON array `[*namespace, key]` (unambiguous: labels may hold any
  character but `.`). It carries the value, timestamps, the TTL and the ids of its vectors.
* **Vectors.** Each text the index config selects (one per path, or one per element for `[*]`
  paths, as LangGraph does) is a NOTE memory of the owner, whose id is derived from
  (namespace, key, path): a put overwrites it in place. Its content is the text, so memstrata's own
  `search` and `context` see it; its `expires_at` follows the item's TTL.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from .. import namespaces
from ..errors import InvalidInput
from ..models import RESERVED_PREFIX, validate_id

ITEM_NAMESPACE = namespaces.LANGGRAPH
"""The `items` namespace holding LangGraph documents (a local constant: see the module docstring)."""
SHARED_OWNER = RESERVED_PREFIX + "langgraph"
"""Owner of namespaces that name no user."""
DEFAULT_USER_LABELS = ("users", "memories")
"""`("users", user_id, ...)`, and LangMem's default `("memories", user_id, ...)`: both per user."""
SOURCE = namespaces.LANGGRAPH_SOURCE
"""`metadata["source"]` of the NOTE memories that index LangGraph items."""


def owner_of(namespace: Sequence[str], user_labels: Sequence[str] = DEFAULT_USER_LABELS) -> str:
    """The memstrata user owning `namespace` (raise `InvalidInput` for a user id memstrata refuses)."""
    if len(namespace) >= 2 and namespace[0] in user_labels:
        return validate_id(namespace[1], f"user id in namespace {tuple(namespace)!r}")
    return SHARED_OWNER


@dataclass(frozen=True, slots=True)
class Owners:
    """Which owners a namespace prefix can reach: one user, or all users and/or the shared owner."""

    user: str | None = None
    all_users: bool = False
    shared: bool = False


def owners_for_prefix(prefix: Sequence[str], user_labels: Sequence[str] = DEFAULT_USER_LABELS) -> Owners:
    """Owners whose items may lie under `prefix` (`"*"` is a wildcard label, as in list_namespaces)."""
    if not prefix:
        return Owners(all_users=True, shared=True)
    first = prefix[0]
    if first != "*" and first not in user_labels:
        return Owners(shared=True)
    if len(prefix) >= 2 and prefix[1] != "*" and first != "*":
        return Owners(user=owner_of(prefix, user_labels))
    # ("users",) itself, like any one-label namespace, is shared; ("users", "*", ...) is not.
    return Owners(all_users=True, shared=first == "*" or len(prefix) == 1)


def document_key(namespace: Sequence[str], key: str) -> str:
    return json.dumps([*namespace, key], ensure_ascii=False, separators=(",", ":"))


def vector_id(namespace: Sequence[str], key: str, path: str) -> str:
    """Deterministic memory id of one indexed text of an item."""
    digest = hashlib.sha256(json.dumps([list(namespace), key, path], ensure_ascii=False).encode("utf-8"))
    return "lg-" + digest.hexdigest()[:40]


def check_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-serialisable dict copy of `value`, or `InvalidInput`."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"a LangGraph item value must be a mapping, got {type(value).__name__}")
    try:
        copy: dict[str, Any] = json.loads(json.dumps(dict(value)))
        return copy
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"a LangGraph item value must be JSON-serialisable: {exc}") from None


def expiry(now: datetime, ttl_minutes: float | None) -> datetime | None:
    if ttl_minutes is None:
        return None
    if isinstance(ttl_minutes, bool) or not isinstance(ttl_minutes, int | float) or ttl_minutes <= 0:
        raise InvalidInput(f"ttl must be a positive number of minutes, got {ttl_minutes!r}")
    return now + timedelta(minutes=ttl_minutes)


@dataclass(frozen=True, slots=True)
class StoredItem:
    """A LangGraph item as memstrata keeps it."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    ttl_minutes: float | None = None
    vector_ids: tuple[str, ...] = ()

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def refreshed(self, now: datetime) -> StoredItem:
        """The item with its TTL restarted at `now` (unchanged when it has no TTL)."""
        return self if self.ttl_minutes is None else replace(self, expires_at=expiry(now, self.ttl_minutes))

    def to_value(self) -> dict[str, Any]:
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "ttl_minutes": self.ttl_minutes,
            "vector_ids": list(self.vector_ids),
        }

    @classmethod
    def from_value(cls, data: Mapping[str, Any]) -> StoredItem:
        expires = data.get("expires_at")
        return cls(
            namespace=tuple(data["namespace"]),
            key=str(data["key"]),
            value=dict(data["value"]),
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            expires_at=datetime.fromisoformat(expires) if expires else None,
            ttl_minutes=data.get("ttl_minutes"),
            vector_ids=tuple(data.get("vector_ids") or ()),
        )


def vector_metadata(namespace: Sequence[str], key: str, path: str) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "langgraph_namespace": "/".join(namespace),
        "langgraph_key": key,
        "langgraph_path": path,
    }


__all__ = [
    "DEFAULT_USER_LABELS",
    "ITEM_NAMESPACE",
    "SHARED_OWNER",
    "Owners",
    "StoredItem",
    "check_value",
    "document_key",
    "expiry",
    "owner_of",
    "owners_for_prefix",
    "vector_id",
    "vector_metadata",
]
