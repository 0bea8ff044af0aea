"""The audit log: who exported, erased, imported or read another user's data as a tenant-wide key, when,
with which key id. It never holds memory text: an entry names the action, the operation, the key, the
user acted on and the time, nothing from a request or response body.

Entries are items of the reserved system user (`namespaces.SYSTEM_USER`), one namespace per tenant
(`audit:<tenant>`), so the same store holds them on SQLite and Postgres and no API request can reach
them except `GET /v1/audit` (the `admin` permission). When a user is erased, every entry naming that
user is deleted and one `erase` entry remains that names only the erasure receipt (whose user hash
cannot be reversed): an erased user leaves nothing in the log but the receipt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..models import new_id, utcnow
from ..namespaces import SYSTEM_USER
from ..storage.base import Store
from .auth import Principal
from .roles import Permission

NAMESPACE_PREFIX = "audit:"
_SCAN = 1_000_000


class Action(StrEnum):
    EXPORT = "export"
    IMPORT = "import"
    ERASE = "erase"
    TENANT_READ = "tenant_read"
    """A key bound to no user (admin, tenant-wide read-only) read one user's data."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: str
    at: datetime
    action: Action
    operation: str
    """The REST operation (`GET /v1/users/{user_id}/export`) or MCP tool (`mcp:search_memories`)."""
    key_id: str | None
    role: str
    user: str | None
    """The user acted on (the API's id, without the tenant); None once that user is erased."""
    receipt: str | None = None
    """For `erase`: the request id of the erasure receipt."""

    def to_value(self) -> dict[str, Any]:
        return {**asdict(self), "at": self.at.isoformat(), "action": self.action.value}

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> AuditEntry:
        return cls(**{**value, "at": datetime.fromisoformat(value["at"]), "action": Action(value["action"])})


def action_for(principal: Principal, needed: Permission, operation: str, user: str | None) -> Action | None:
    """What, if anything, an allowed access must leave in the log (pure)."""
    if needed is Permission.EXPORT:
        return Action.IMPORT if operation.endswith("/import") else Action.EXPORT
    if needed is Permission.ERASE:
        return Action.ERASE if operation.startswith("DELETE ") else None  # reading a receipt is not logged
    if needed is Permission.READ and user is not None and principal.user is None and principal.authenticated:
        return Action.TENANT_READ
    return None


class AuditLog:
    """Append, list and prune the audit entries of each tenant in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, principal: Principal, action: Action, operation: str, user: str | None) -> AuditEntry:
        entry = AuditEntry(
            id=new_id()[:16], at=utcnow(), action=action, operation=operation, key_id=principal.key_id,
            role=principal.role.value, user=user,
        )  # fmt: skip
        self.store.put_item(SYSTEM_USER, NAMESPACE_PREFIX + principal.tenant, _item_key(entry), entry.to_value())
        return entry

    def on_access(self, principal: Principal, needed: Permission, operation: str, user: str | None) -> None:
        """Log an allowed access if the audit rule (`action_for`) says so."""
        action = action_for(principal, needed, operation, user)
        if action is not None:
            self.record(principal, action, operation, user)

    def entries(self, tenant: str, *, limit: int = 100, offset: int = 0) -> list[AuditEntry]:
        """Newest first."""
        items = self.store.list_items(SYSTEM_USER, NAMESPACE_PREFIX + tenant, limit=offset + limit)
        return [AuditEntry.from_value(item.value) for item in items[offset:]]

    def erased(self, principal: Principal, user: str, receipt: str, operation: str) -> AuditEntry:
        """After erasing `user`: delete every entry naming the user, keep one naming only the receipt."""
        namespace = NAMESPACE_PREFIX + principal.tenant
        for item in self.store.list_items(SYSTEM_USER, namespace, limit=_SCAN):
            if item.value.get("user") == user:
                self.store.delete_item(SYSTEM_USER, namespace, item.key)
        entry = AuditEntry(
            id=new_id()[:16], at=utcnow(), action=Action.ERASE, operation=operation, key_id=principal.key_id,
            role=principal.role.value, user=None, receipt=receipt,
        )  # fmt: skip
        self.store.put_item(SYSTEM_USER, namespace, _item_key(entry), entry.to_value())
        return entry


def _item_key(entry: AuditEntry) -> str:
    return f"{entry.at.isoformat()}#{entry.id}"
