"""Erasure (GDPR Art. 17): every trace of a user, in every layer and backend, in one call.

Order: count what is there (per layer), clear the user's buffer keys (Redis or in-process), then
`Store.erase_user` deletes the user's memories (rows, vectors, full text), history and items of every
namespace in one transaction, and leaves no deleted text in the storage files (see the stores). If
the buffer fails, nothing was erased yet and the call can be repeated.

The returned `ErasureReceipt` is stored as an item of `namespaces.SYSTEM_USER` in namespace RECEIPT,
keyed by its request id. It holds counts, times and a salted PBKDF2 hash of the user id — never the
id or any content — so that "was this user erased?" can be answered for someone who knows the id.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from ... import namespaces
from ...models import MemoryKind, new_id
from ...storage.base import Store
from ._paging import EVERYTHING, all_items, user_namespaces
from .policy import LIFECYCLE

ITERATIONS = 100_000

LAYER_OF_KIND = {
    MemoryKind.FACT: "semantic",
    MemoryKind.PREFERENCE: "semantic",
    MemoryKind.EVENT: "semantic",
    MemoryKind.NOTE: "semantic",
    MemoryKind.TASK: "semantic",
    MemoryKind.EPISODE: "episodes",
    MemoryKind.SUMMARY: "summaries",
    MemoryKind.PROCEDURE: "procedures",
}
LAYER_OF_NAMESPACE = {
    namespaces.PROFILE: "profile",
    namespaces.USER_CONTEXT: "profile",
    namespaces.SESSION: "sessions",
    namespaces.ENTITY: "entities",
    namespaces.QUEUE: "queue",
    LIFECYCLE: "lifecycle",
    "langgraph": "langgraph",
}
LAYERS = (
    "semantic",
    "episodes",
    "summaries",
    "procedures",
    "entities",
    "profile",
    "sessions",
    "queue",
    "lifecycle",
    "langgraph",
    "other",
    "history",
    "buffer",
)


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """Proof of an erasure that holds no personal data."""

    request_id: str
    erased_at: datetime
    user_hash: str
    """PBKDF2-SHA256 of the user id, salted with `salt` (and keyed with the receipt secret, if set)."""
    salt: str
    algorithm: str
    counts: dict[str, int]
    """Rows or keys removed per layer (`LAYERS`); "other" counts items of namespaces no layer claims."""
    duration_ms: float

    def to_value(self) -> dict[str, Any]:
        return {**asdict(self), "erased_at": self.erased_at.isoformat()}

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> ErasureReceipt:
        return cls(**{**value, "erased_at": datetime.fromisoformat(value["erased_at"])})

    def matches(self, user_id: str, *, secret: str | None = None) -> bool:
        """Whether this receipt is for `user_id` (pass the receipt secret if the deployment has one)."""
        return hmac.compare_digest(user_hash(user_id, bytes.fromhex(self.salt), secret), self.user_hash)


def user_hash(user_id: str, salt: bytes, secret: str | None) -> str:
    return hashlib.pbkdf2_hmac("sha256", user_id.encode("utf-8"), salt + (secret or "").encode(), ITERATIONS).hex()


class Eraser:
    def __init__(
        self, *, store: Store, clock: Callable[[], datetime], buffer: Callable[[], Any], secret: str | None
    ) -> None:
        self.store = store
        self.clock = clock
        self._buffer = buffer
        self.secret = secret

    def erase(self, user_id: str) -> ErasureReceipt:
        started = time.perf_counter()
        counts, items = self._layer_counts(user_id)
        buffer = self._buffer()
        counts["buffer"] = int(buffer.clear_user(user_id) or 0) if buffer is not None else 0
        removed = self.store.erase_user(user_id)
        counts["history"] = int(removed.get("history", 0))
        counts["other"] = max(0, int(removed.get("items", 0)) - items)
        salt = secrets.token_bytes(16)
        receipt = ErasureReceipt(
            request_id=new_id(),
            erased_at=self.clock(),
            user_hash=user_hash(user_id, salt, self.secret),
            salt=salt.hex(),
            algorithm=f"pbkdf2-sha256:{ITERATIONS}" + (":keyed" if self.secret else ""),
            counts=counts,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )
        self.store.put_item(namespaces.SYSTEM_USER, namespaces.RECEIPT, receipt.request_id, receipt.to_value())
        return receipt

    def _layer_counts(self, user_id: str) -> tuple[dict[str, int], int]:
        """Rows per layer before the erasure, and the number of items in known namespaces."""
        counts = dict.fromkeys(LAYERS, 0)
        for kind in MemoryKind:
            counts[LAYER_OF_KIND[kind]] += self.store.count_memories(user_id, replace(EVERYTHING, kinds=(kind,)))
        items = 0
        for namespace in user_namespaces():
            found = len(all_items(self.store, user_id, namespace))
            counts[LAYER_OF_NAMESPACE.get(namespace, "other")] += found
            items += found
        return counts, items

    def receipt(self, request_id: str) -> ErasureReceipt | None:
        item = self.store.get_item(namespaces.SYSTEM_USER, namespaces.RECEIPT, request_id)
        return ErasureReceipt.from_value(item.value) if item else None
