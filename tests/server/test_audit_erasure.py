"""`Memory.erase_user` applies the audit log's erasure rule on every store: the entries naming the user
go, one entry naming only the receipt stays; a store without a log for the tenant gets none."""

from __future__ import annotations

import json

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.memory import Memory
from memstrata.namespaces import SYSTEM_USER
from memstrata.server.audit import NAMESPACE_PREFIX, Action, AuditLog
from memstrata.server.auth import Principal
from memstrata.server.roles import Role
from memstrata.storage.base import Store


def test_memory_erase_user_scrubs_the_users_audit_entries(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    log = AuditLog(store)
    admin = Principal(tenant="acme", key_id="k-admin", role=Role.ADMIN)
    log.record(admin, Action.EXPORT, "GET /v1/users/{user_id}/export", "ivy")
    log.record(admin, Action.TENANT_READ, "GET /v1/users/{user_id}/memories", "ivy")
    log.record(admin, Action.EXPORT, "GET /v1/users/{user_id}/export", "jon")
    memory.add("Ivy keeps orchids", scope="acme:ivy")

    receipt = memory.erase_user(scope="acme:ivy")

    entries = log.entries("acme")
    assert [e.user for e in entries if e.user is not None] == ["jon"]
    [erased] = [e for e in entries if e.action is Action.ERASE]
    assert erased.receipt == receipt.request_id and erased.user is None and erased.role == "operator"
    assert "ivy" not in json.dumps([e.to_value() for e in entries])
    assert memory.erase_user(scope="acme:ivy").request_id != receipt.request_id  # erasing again is fine


def test_a_store_without_a_log_gets_none(store: Store) -> None:
    memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
    memory.add("Kim likes chess", scope="acme:kim")
    memory.add("Lee likes go", scope="lee")
    memory.erase_user(scope="acme:kim")
    memory.erase_user(scope="lee")
    assert store.list_items(SYSTEM_USER, NAMESPACE_PREFIX + "acme", limit=10) == []
