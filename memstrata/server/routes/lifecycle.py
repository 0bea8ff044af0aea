"""Erasure (with a content-free receipt), export/import (portability), consolidation."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, Request

from ...errors import NotFound
from ...export_format import ExportDocument
from ...layers.lifecycle import ConsolidationOptions
from ..deps import Eraser, Exporter, MemoryDep, StateDep, Writer
from ..routing import ShapedRoute
from ..schemas import (
    ERROR_RESPONSES,
    IMPORT_BODY,
    ConsolidationOut,
    ErasureReceiptOut,
    ImportReportOut,
    PathId,
    parse_export,
)

router = APIRouter(prefix="/v1/users/{user_id}", tags=["privacy"], responses=ERROR_RESPONSES, route_class=ShapedRoute)


@router.delete("", summary="Erase the user: every memory, entity, fact, session, queue item and history event")
def erase_user(user_id: PathId, caller: Eraser, memory: MemoryDep, state: StateDep) -> ErasureReceiptOut:
    receipt = memory.erase_user(scope=caller.scope(user_id))
    state.audit.erased(caller, receipt, user_id, "DELETE /v1/users/{user_id}")
    return ErasureReceiptOut.of(receipt)


@router.get("/erasures/{request_id}", summary="An erasure receipt of this user, by request id")
def erasure_receipt(user_id: PathId, request_id: PathId, caller: Eraser, memory: MemoryDep) -> ErasureReceiptOut:
    scope = caller.scope(user_id)
    receipt = memory.erasure_receipt(request_id, scope=scope)
    if receipt is None:
        raise NotFound(f"no erasure receipt {request_id!r} for user {user_id!r}")
    return ErasureReceiptOut.of(receipt)


@router.get("/export", summary="Everything stored about the user, as a versioned JSON document")
def export_user(user_id: PathId, caller: Exporter, memory: MemoryDep) -> ExportDocument:
    return memory.export_user(scope=caller.scope(user_id))


@router.post("/import", summary="Restore an export into this user (re-embedded; idempotent)", openapi_extra=IMPORT_BODY)
async def import_user(user_id: PathId, request: Request, caller: Exporter, memory: MemoryDep) -> ImportReportOut:
    target = caller.scope(user_id).user_id  # the path's user, whatever the document names
    document = parse_export(await request.body())
    report = await anyio.to_thread.run_sync(lambda: memory.import_user(document, scope=target))
    return ImportReportOut.of(report)


@router.post("/consolidate", summary="Compress old memories into summaries (originals stay in history)")
def consolidate(user_id: PathId, body: ConsolidationOptions, caller: Writer, memory: MemoryDep) -> ConsolidationOut:
    report = memory.consolidate(scope=caller.scope(user_id), options=body)
    return ConsolidationOut.of(report)
