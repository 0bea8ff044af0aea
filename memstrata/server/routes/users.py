"""The users of a tenant (admin keys only; a user-bound key sees only its own user)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ...memory import Memory
from ..deps import MemoryDep, Reader
from ..routing import ShapedRoute
from ..schemas import ERROR_RESPONSES, MAX_PAGE, UsersPage
from ..tenancy import api_id, split_store_user_id

router = APIRouter(prefix="/v1/users", tags=["users"], responses=ERROR_RESPONSES, route_class=ShapedRoute)

_SCAN_LIMIT = 1_000_000


def tenant_store_ids(memory: Memory, tenant: str) -> list[str]:
    """Store user ids of every user of `tenant` that has any data."""
    return [s for s in memory.store.user_ids(limit=_SCAN_LIMIT) if (split_store_user_id(s) or ("",))[0] == tenant]


@router.get("", summary="Users of the tenant that have any data")
def list_users(
    caller: Reader,
    memory: MemoryDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> UsersPage:
    if caller.user is not None:
        return UsersPage(items=[caller.user] if offset == 0 else [], next_offset=None)
    users = sorted(api_id(caller.tenant, s) or s for s in tenant_store_ids(memory, caller.tenant))
    page = users[offset : offset + limit]
    return UsersPage(items=page, next_offset=offset + limit if len(users) > offset + limit else None)
