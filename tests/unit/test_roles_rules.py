"""The access rule and the audit rule as pure functions."""

from __future__ import annotations

import pytest

from memstrata.errors import PermissionDenied
from memstrata.server.audit import Action, action_for
from memstrata.server.auth import Principal
from memstrata.server.roles import ROLE_PERMISSIONS, Permission, Role, check_access

ALL = frozenset(Permission)


def test_check_access_needs_the_permission_and_the_bound_user() -> None:
    check_access(permissions=ALL, bound_user=None, needed=Permission.READ, user="bob")
    check_access(permissions=frozenset({Permission.WRITE}), bound_user="a", needed=Permission.WRITE, user="a")
    check_access(permissions=frozenset(), bound_user="a", needed=None, user="a")  # any valid key, own user
    with pytest.raises(PermissionDenied, match="lacks the 'read' permission"):
        check_access(permissions=frozenset({Permission.WRITE}), bound_user=None, needed=Permission.READ, user="a")
    with pytest.raises(PermissionDenied, match="may not access user 'b'"):
        check_access(permissions=ALL, bound_user="a", needed=Permission.READ, user="b")


def test_only_the_admin_role_holds_admin() -> None:
    assert [role for role, held in ROLE_PERMISSIONS.items() if Permission.ADMIN in held] == [Role.ADMIN]
    assert Permission.READ not in ROLE_PERMISSIONS[Role.INGEST_ONLY]
    assert ROLE_PERMISSIONS[Role.PRIVACY] == {Permission.EXPORT, Permission.ERASE}


def test_audit_rule() -> None:
    admin = Principal(tenant="t", key_id="k")
    user = Principal(tenant="t", user="a", role=Role.USER, permissions=ROLE_PERMISSIONS[Role.USER])
    anonymous = Principal(tenant="t", authenticated=False)
    assert action_for(admin, Permission.READ, "GET /v1/users/{user_id}/memories", "a") is Action.TENANT_READ
    assert action_for(admin, Permission.READ, "GET /v1/users", None) is None  # no user's data
    assert action_for(user, Permission.READ, "GET /v1/users/{user_id}/memories", "a") is None  # own data
    assert action_for(anonymous, Permission.READ, "GET /v1/users/{user_id}/memories", "a") is None
    assert action_for(user, Permission.EXPORT, "GET /v1/users/{user_id}/export", "a") is Action.EXPORT
    assert action_for(user, Permission.EXPORT, "POST /v1/users/{user_id}/import", "a") is Action.IMPORT
    assert action_for(user, Permission.ERASE, "DELETE /v1/users/{user_id}", "a") is Action.ERASE
    assert action_for(user, Permission.ERASE, "GET /v1/users/{user_id}/erasures/{request_id}", "a") is None
    assert action_for(admin, Permission.WRITE, "POST /v1/users/{user_id}/memories", "a") is None
