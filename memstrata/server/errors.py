"""The one table mapping memstrata's exception tree to HTTP statuses, and problem+json rendering.

Every error response of the API is an RFC 9457 problem document:
`{"type": "about:blank", "title": "...", "status": 404, "detail": "memory 'x' not found",
"error": "MemoryNotFound"}`. `error` is the exact class of the exception raised (any class of the tree
in `memstrata.errors`, including ones added later), so that `MemoryClient` raises that same class; the
status is the one of the class's nearest ancestor in `STATUS` (its method resolution order).
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    BackendError,
    BufferUnavailable,
    ConfigurationError,
    EmbeddingMismatch,
    InvalidInput,
    MemstrataError,
    NotFound,
    PermissionDenied,
    ProviderError,
    StoreError,
    UsageError,
    UserErased,
)

logger = logging.getLogger("memstrata.server")

STATUS: dict[type[MemstrataError], int] = {
    NotFound: 404,
    PermissionDenied: 403,
    UserErased: 409,
    EmbeddingMismatch: 409,
    InvalidInput: 422,
    ConfigurationError: 501,
    UsageError: 400,
    ProviderError: 502,
    BufferUnavailable: 503,
    StoreError: 503,
    BackendError: 503,
    MemstrataError: 500,
}
"""Branches of the exception tree → HTTP status. A class not listed (`MemoryNotFound`, `LLMOutputError`,
a class added later) answers the status of its nearest listed ancestor."""

PROBLEM_MEDIA_TYPE = "application/problem+json"


def status_for(kind: type[MemstrataError]) -> int:
    """The HTTP status of an exception class: that of the first class of its MRO that `STATUS` lists."""
    return next(STATUS[base] for base in kind.__mro__ if base in STATUS)


def problem(status: int, detail: str, *, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **extra,
    }
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


async def _memstrata_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemstrataError)
    status = status_for(type(exc))
    if status >= 500:
        logger.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return problem(status, str(exc), error=type(exc).__name__)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request)
    return problem(exc.status_code, str(exc.detail), headers=headers)


def _allowed_methods(request: Request) -> str:
    """Every method of every route matching the path (Starlette lists only the first route's)."""
    path = request.scope["path"]
    methods: set[str] = set()
    for route in request.app.router.routes:
        regex, route_methods = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if regex is not None and route_methods and regex.match(path):
            methods |= set(route_methods)
    return ", ".join(sorted(methods))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()
    ]
    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors) or "invalid request"
    return problem(422, detail, errors=errors)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(MemstrataError, _memstrata_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
