"""Roles and permissions of API keys, and the one access rule the REST API and MCP both apply.

A request (a REST route or an MCP tool) needs one `Permission`; a key holds the permissions of its
`Role` plus any extra grants. Independently, a key bound to a user may only act on that user.

| role          | permissions                          | bound to                      |
|---------------|--------------------------------------|-------------------------------|
| `admin`       | read, write, export, erase, admin    | no user (the whole tenant)    |
| `user`        | read, write, export, erase           | exactly one user              |
| `read-only`   | read                                 | one user or the whole tenant  |
| `ingest-only` | write (stores; cannot read back)     | one user or the whole tenant  |
| `privacy`     | export, erase                        | one user or the whole tenant  |

`export` (whole-user export and import) and `erase` (erasure and its receipts) are permissions of
their own so that a service can hold them without read or write, or read/write without them; a user
key holds them because they are its user's own data-subject rights. `--grant` adds either to any role.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from ..errors import InvalidInput, PermissionDenied


class Permission(StrEnum):
    READ = "read"
    """Search, list and get memories, facts, entities, procedures, sessions, context, the queue."""
    WRITE = "write"
    """Add, change, supersede and forget memories; set facts and entities; send messages; learn."""
    EXPORT = "export"
    """Export a user's whole data as one document, and import such a document."""
    ERASE = "erase"
    """Erase a user and read erasure receipts."""
    ADMIN = "admin"
    """Tenant-wide operations: the audit log and agent-wide procedures."""


class Role(StrEnum):
    ADMIN = "admin"
    USER = "user"
    READ_ONLY = "read-only"
    INGEST_ONLY = "ingest-only"
    PRIVACY = "privacy"


ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.ADMIN: frozenset(Permission),
    Role.USER: frozenset({Permission.READ, Permission.WRITE, Permission.EXPORT, Permission.ERASE}),
    Role.READ_ONLY: frozenset({Permission.READ}),
    Role.INGEST_ONLY: frozenset({Permission.WRITE}),
    Role.PRIVACY: frozenset({Permission.EXPORT, Permission.ERASE}),
}
GRANTABLE = frozenset({Permission.EXPORT, Permission.ERASE})
"""Permissions `--grant` may add to a role (never admin: that is what the admin role is for)."""


def parse_role(value: object) -> Role:
    try:
        return Role(str(value))
    except ValueError:
        raise InvalidInput(f"unknown role {value!r}; known: {', '.join(r.value for r in Role)}") from None


def parse_grants(values: Iterable[object]) -> frozenset[Permission]:
    grants: set[Permission] = set()
    for value in values:
        try:
            permission = Permission(str(value))
        except ValueError:
            raise InvalidInput(
                f"unknown permission {value!r}; known: {', '.join(p.value for p in Permission)}"
            ) from None
        if permission not in GRANTABLE:
            raise InvalidInput(f"permission {permission.value!r} cannot be granted; grantable: export, erase")
        grants.add(permission)
    return frozenset(grants)


def check_binding(role: Role, user: str | None) -> None:
    """An admin key is never bound to a user; a user key always is."""
    if role is Role.ADMIN and user is not None:
        raise InvalidInput("an admin key acts for the whole tenant: do not bind it to a user")
    if role is Role.USER and user is None:
        raise InvalidInput("a user key must be bound to one user (--user)")


def permissions_of(role: Role, grants: Iterable[Permission] = ()) -> frozenset[Permission]:
    return ROLE_PERMISSIONS[role] | frozenset(grants)


def check_access(
    *, permissions: frozenset[Permission], bound_user: str | None, needed: Permission | None, user: str | None
) -> None:
    """THE access rule: the key must hold `needed` (None: any valid key) and, if it is bound to a user,
    `user` (the user the request acts on, None for tenant-level requests) must be that user."""
    if needed is not None and needed not in permissions:
        held = ", ".join(sorted(p.value for p in permissions)) or "none"
        raise PermissionDenied(f"this API key lacks the {needed.value!r} permission (it holds: {held})")
    if user is not None and bound_user is not None and user != bound_user:
        raise PermissionDenied(f"this API key may not access user {user!r}")
