"""The audit log: who exported, erased, imported or read another user's data as a tenant-wide key, when,
with which key id. It never holds memory text: an entry names the action, the operation, the key, the
user acted on and the time, nothing from a request or response body.

Entries are items of the reserved system user (`namespaces.SYSTEM_USER`), one namespace per tenant
(`audit:<tenant>`), so the same store holds them on SQLite and Postgres and no API request can reach
them except `GET /v1/audit` (the `admin` permission). When a user is erased, every entry naming that
user is deleted and one `erase` entry remains that names only the erasure receipt (whose user hash
cannot be reversed): an erased user leaves nothing in the log but the receipt. Every erasure path
applies that one rule (`record_erasure`): `DELETE /v1/users/{user_id}`, `memstrata erase` and
`Memory.erase_user` itself, whenever the store holds a log for the user's tenant.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..layers.lifecycle import ErasureReceipt
from ..models import new_id, utcnow
from ..namespaces import SYSTEM_USER
from ..storage.base import Store
from .auth import Principal
from .roles import Permission
from .tenancy import split_store_user_id

NAMESPACE_PREFIX = "audit:"
OPERATOR = "operator"
"""`role` of an entry no API key wrote: `memstrata erase` or a library call on the store itself."""
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
            id=new_id()[:16],
            at=utcnow(),
            action=action,
            operation=operation,
            key_id=principal.key_id,
            role=principal.role.value,
            user=user,
        )
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

    def erased(self, principal: Principal, receipt: ErasureReceipt, user: str, operation: str) -> AuditEntry:
        """After `principal` erased `user` (REST): the erasure rule, with the key named on its entry."""
        entry = record_erasure(
            self.store,
            f"{principal.tenant}:{user}",
            receipt,
            operation=operation,
            key_id=principal.key_id,
            role=principal.role.value,
            always=True,
        )
        assert entry is not None
        return entry


def record_erasure(
    store: Store,
    store_user_id: str,
    receipt: ErasureReceipt,
    *,
    operation: str,
    key_id: str | None = None,
    role: str = OPERATOR,
    always: bool = False,
) -> AuditEntry | None:
    """THE erasure rule of the log, applied by every erasure path: delete every entry of the tenant's
    log naming the erased user and keep one `erase` entry naming only the receipt.

    The entry's item key derives from the receipt, so a second call for the same erasure (the REST
    route or the CLI naming itself after `Memory.erase_user` did) replaces the entry instead of adding
    one. A store user id that is no tenant's user (`split_store_user_id`) has no log; a tenant whose
    log is empty gets none either, unless `always` (the server, which owns the log). None then."""
    parts = split_store_user_id(store_user_id)
    if parts is None:
        return None
    tenant, user = parts
    namespace = NAMESPACE_PREFIX + tenant
    items = store.list_items(SYSTEM_USER, namespace, limit=_SCAN)
    if not items and not always:
        return None
    for item in items:
        if item.value.get("user") == user:
            store.delete_item(SYSTEM_USER, namespace, item.key)
    entry = AuditEntry(
        id=receipt.request_id[:16],
        at=receipt.erased_at,
        action=Action.ERASE,
        operation=operation,
        key_id=key_id,
        role=role,
        user=None,
        receipt=receipt.request_id,
    )
    store.put_item(SYSTEM_USER, namespace, _item_key(entry), entry.to_value())
    return entry


def _item_key(entry: AuditEntry) -> str:
    return f"{entry.at.isoformat()}#{entry.id}"
