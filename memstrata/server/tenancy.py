"""How (tenant, user) maps to the store's user id — the one isolation key of every layer.

    store user id  = f"{tenant}:{user}"
    store agent id = f"{tenant}:{agent}"

Tenant ids are 1-32 characters of lowercase letters, digits and `-` (no `:`), so the first `:`
always separates tenant from user and two different (tenant, user) pairs never share a store id.
User ids follow `memstrata.models.validate_id`; they may contain `:`. The whole id must stay
within the store's 128-character limit. The reserved system user (`_system`) starts with `_`,
which no tenant id can, so no API request can reach it.

Agent ids are tenant-qualified the same way, because agent-wide data (procedures shared by all users
of an agent) lives under a reserved scope derived from the agent id alone: without the prefix two
tenants with an agent named "support" would share it.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput
from ..models import validate_id

DEFAULT_TENANT = "default"
SEPARATOR = ":"
_TENANT = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$")


def validate_tenant(value: object) -> str:
    if not isinstance(value, str) or not _TENANT.match(value):
        raise InvalidInput(
            f"invalid tenant id {value!r}: use 1-32 lowercase letters, digits or '-' (not at either end)"
        )
    return value


def store_user_id(tenant: str, user: str) -> str:
    """The store's user id for `user` of `tenant`."""
    validate_tenant(tenant)
    validate_id(user, "user_id")
    combined = f"{tenant}{SEPARATOR}{user}"
    if len(combined) > 128:
        raise InvalidInput(f"user id {user!r} is too long for tenant {tenant!r} (tenant:user must be <= 128)")
    return combined


def split_store_user_id(store_id: str) -> tuple[str, str] | None:
    """(tenant, user) of a store user id, or None if it is not a tenant user (e.g. `_system`, CLI ids)."""
    tenant, sep, user = store_id.partition(SEPARATOR)
    if not sep or not _TENANT.match(tenant) or not user:
        return None
    return tenant, user


def store_agent_id(tenant: str, agent: str | None) -> str | None:
    """The store's agent id for `agent` of `tenant` (None stays None)."""
    if agent is None:
        return None
    validate_id(agent, "agent_id")
    combined = f"{tenant}{SEPARATOR}{agent}"
    if len(combined) > 128:
        raise InvalidInput(f"agent id {agent!r} is too long for tenant {tenant!r} (tenant:agent must be <= 128)")
    return combined


def api_id(tenant: str, store_id: str | None) -> str | None:
    """The id a client of `tenant` sees for a tenant-qualified store id (user or agent)."""
    if store_id is None:
        return None
    prefix = f"{tenant}{SEPARATOR}"
    return store_id[len(prefix) :] if store_id.startswith(prefix) else store_id
