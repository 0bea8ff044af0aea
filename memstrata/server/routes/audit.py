"""The tenant's audit log (the `admin` permission): exports, imports, erasures and tenant-wide reads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ..audit import AuditEntry
from ..deps import StateDep, TenantAdmin
from ..routing import ShapedRoute
from ..schemas import ERROR_RESPONSES, MAX_PAGE

router = APIRouter(prefix="/v1/audit", tags=["audit"], responses=ERROR_RESPONSES, route_class=ShapedRoute)


class AuditEntryOut(BaseModel):
    id: str
    at: datetime
    action: str = Field(description="export, import, erase or tenant_read")
    operation: str = Field(description="the REST operation or MCP endpoint that was called")
    key_id: str | None = Field(description="id of the API key (see `memstrata keys list`); null without auth")
    role: str
    user: str | None = Field(description="the user acted on; null on the entry an erasure leaves")
    receipt: str | None = Field(description="erasures: the receipt's request id")

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditEntryOut:
        return cls(**{**entry.to_value(), "at": entry.at})


class AuditPage(BaseModel):
    items: list[AuditEntryOut]
    next_offset: int | None


@router.get("", summary="Audit log of the tenant, newest first (never any memory text)")
def audit_log(
    caller: TenantAdmin,
    state: StateDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> AuditPage:
    entries = state.audit.entries(caller.tenant, limit=limit + 1, offset=offset)
    return AuditPage(
        items=[AuditEntryOut.of(e) for e in entries[:limit]],
        next_offset=offset + limit if len(entries) > limit else None,
    )
