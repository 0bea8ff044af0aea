"""API keys and the access rule of the server.

A key is a high-entropy random token (`msk_` + 32 random bytes, URL-safe). Only its SHA-256 hash is
stored, as an item of the reserved system user (`namespaces.SYSTEM_USER`, namespace `apikey`, item
key = the hash), so a key is looked up in one indexed read and a leaked database holds no usable key.

Every key is bound to one tenant and has a role (`roles.py`: admin, user, read-only, ingest-only,
privacy) plus optional extra grants. A key bound to a user may only touch that user; a key bound to no
user acts for every user of the tenant. The access rule is `roles.check_access`, applied through
`Principal.check`: by the REST dependency of every route (`deps.requires`), by every MCP tool, and by
`Principal.scope` for whatever user ids the path, body, filters or metadata of a request carry (each
must be one the key may touch, else `PermissionDenied`, 403, and they must all agree).

Key records written before roles existed carry no role: a key bound to no user reads as `admin`, one
bound to a user as `user` (both keep exactly the powers they had).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import InvalidInput, NotFound, PermissionDenied
from ..models import Scope, new_id, utcnow, validate_id
from ..namespaces import API_KEY, SYSTEM_USER
from ..storage.base import Store
from .roles import Permission, Role, check_access, check_binding, parse_grants, parse_role, permissions_of
from .tenancy import store_agent_id, store_user_id, validate_tenant

API_KEY_NAMESPACE = API_KEY
"""Items of `SYSTEM_USER` holding API key records; item key = sha256 hex of the token."""

TOKEN_PREFIX = "msk_"
_MAX_KEYS = 1_000_000


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """The stored record of a key (never the token itself)."""

    id: str
    tenant: str
    user: str | None
    name: str
    created_at: datetime
    revoked_at: datetime | None = None
    role: Role = Role.ADMIN
    grants: frozenset[Permission] = frozenset()

    @property
    def admin(self) -> bool:
        return self.role is Role.ADMIN

    @property
    def permissions(self) -> frozenset[Permission]:
        return permissions_of(self.role, self.grants)

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_value(self) -> dict[str, object]:
        return {
            "id": self.id,
            "tenant": self.tenant,
            "user": self.user,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "role": self.role.value,
            "grants": sorted(g.value for g in self.grants),
        }

    @classmethod
    def from_value(cls, value: dict[str, object]) -> ApiKey:
        revoked = value.get("revoked_at")
        user = str(value["user"]) if value.get("user") is not None else None
        legacy_role = Role.ADMIN if user is None else Role.USER
        grants = value.get("grants")
        return cls(
            id=str(value["id"]),
            tenant=str(value["tenant"]),
            user=user,
            name=str(value.get("name") or ""),
            created_at=datetime.fromisoformat(str(value["created_at"])),
            revoked_at=datetime.fromisoformat(str(revoked)) if revoked else None,
            role=parse_role(value.get("role") or legacy_role),
            grants=parse_grants(grants if isinstance(grants, list) else ()),
        )


class KeyRing:
    """Create, list, revoke and check API keys kept in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create(
        self,
        tenant: str,
        *,
        user: str | None = None,
        name: str = "",
        role: Role | str | None = None,
        grants: Iterable[Permission | str] = (),
    ) -> tuple[ApiKey, str]:
        """Make a key; return its record and the token. The token is shown once and never stored.
        `role` defaults to `admin` for a key bound to no user and `user` for a user-bound key."""
        validate_tenant(tenant)
        if user is not None:
            store_user_id(tenant, user)  # validates the user id and the combined length
        if len(name) > 200:
            raise InvalidInput("key name must be at most 200 characters")
        chosen = parse_role(role) if role is not None else (Role.ADMIN if user is None else Role.USER)
        check_binding(chosen, user)
        token = new_token()
        key = ApiKey(
            id=new_id()[:16],
            tenant=tenant,
            user=user,
            name=name,
            created_at=utcnow(),
            role=chosen,
            grants=parse_grants(grants),
        )
        self.store.put_item(SYSTEM_USER, API_KEY_NAMESPACE, hash_token(token), key.to_value())
        return key, token

    def _items(self) -> list[tuple[str, ApiKey]]:
        items = self.store.list_items(SYSTEM_USER, API_KEY_NAMESPACE, limit=_MAX_KEYS)
        return [(item.key, ApiKey.from_value(item.value)) for item in items]

    def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> list[ApiKey]:
        keys = [key for _, key in self._items()]
        keys = [k for k in keys if (tenant is None or k.tenant == tenant) and (include_revoked or k.active)]
        return sorted(keys, key=lambda k: (k.tenant, k.created_at))

    def revoke(self, key_id: str, *, tenant: str | None = None) -> ApiKey:
        """Mark a key revoked (kept for audit, refused from now on). Raise `NotFound` if unknown."""
        for digest, key in self._items():
            if key.id == key_id and (tenant is None or key.tenant == tenant):
                revoked = replace(key, revoked_at=key.revoked_at or utcnow())
                self.store.put_item(SYSTEM_USER, API_KEY_NAMESPACE, digest, revoked.to_value())
                return revoked
        raise NotFound(f"API key {key_id!r} not found")

    def check(self, token: str) -> ApiKey | None:
        """The active key for this token, or None."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        item = self.store.get_item(SYSTEM_USER, API_KEY_NAMESPACE, hash_token(token))
        if item is None:
            return None
        key = ApiKey.from_value(item.value)
        return key if key.active else None

    def empty(self) -> bool:
        return not self.store.list_items(SYSTEM_USER, API_KEY_NAMESPACE, limit=1)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a tenant, the key's permissions and, for a user-bound key, the one user it may touch."""

    tenant: str
    user: str | None = None
    key_id: str | None = None
    authenticated: bool = True
    """False only in the explicit development mode without auth."""
    role: Role = Role.ADMIN
    permissions: frozenset[Permission] = frozenset(Permission)

    @property
    def admin(self) -> bool:
        return self.role is Role.ADMIN

    @classmethod
    def of(cls, key: ApiKey) -> Principal:
        return cls(tenant=key.tenant, user=key.user, key_id=key.id, role=key.role, permissions=key.permissions)

    def check(self, needed: Permission | None, user: str | None = None) -> None:
        """Apply the access rule (`roles.check_access`): raise `PermissionDenied` unless allowed."""
        check_access(permissions=self.permissions, bound_user=self.user, needed=needed, user=user)

    def may_touch(self, user: str) -> bool:
        try:
            self.check(None, user)
        except PermissionDenied:
            return False
        return True

    def require_admin(self) -> None:
        self.check(Permission.ADMIN)

    def store_id(self, user: str) -> str:
        """The store user id of `user`, if this principal may touch it."""
        validate_id(user, "user_id")
        self.check(None, user)
        return store_user_id(self.tenant, user)

    def scope(
        self,
        user: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        claimed: Iterable[object] = (),
    ) -> Scope:
        """The store scope for `user`. `claimed` are the other user ids the request carries
        (body `user_id`, filters, metadata): each must be touchable by this key and equal `user`."""
        store_id = self.store_id(user)
        for other in claimed:
            text = str(other)
            self.check(None, text)
            if text != user:
                raise InvalidInput(f"the request names user {text!r} but acts on user {user!r}")
        return Scope(user_id=store_id, agent_id=store_agent_id(self.tenant, agent_id), session_id=session_id)
