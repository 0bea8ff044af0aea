"""`create_app(settings | memory)`: the FastAPI application of `memstrata serve`.

One process serves the REST API under /v1 (OpenAPI at /docs), /healthz, /metrics, the MCP
streamable-HTTP endpoint at /mcp and the Web UI at /ui.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from starlette.routing import Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..memory import Memory
from ..settings import Settings
from .audit import AuditLog
from .auth import KeyRing
from .config import ServerConfig
from .deps import ServerState, reject_unknown_query
from .errors import PROBLEM_MEDIA_TYPE, install_error_handlers
from .headers import UiSecurityHeaders
from .limits import BodyLimitMiddleware
from .metrics import Metrics, MetricsMiddleware
from .proxies import TrustedProxyMiddleware, parse_networks
from .ratelimit import RateLimiter, RateLimitMiddleware
from .routes import audit, conversation, health, knowledge, learning, lifecycle, memories, search, users
from .routing import ShapedRoute

logger = logging.getLogger("memstrata.server")

UI_DIR = Path(__file__).parent / "ui"
DOCS_ASSETS_URL = "/docs-assets"
DOCS_PAGES = frozenset({"/docs", "/redoc"})
# The docs pages may load only from this server (Redoc's sidebar logo would otherwise come from its CDN).
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:"
)
INSECURE_HEADER = "X-Memstrata-Auth"
INSECURE_WARNING = "disabled: development mode, every request acts as the tenant's admin; never expose this server"

UVICORN_OPTIONS: dict[str, Any] = {"proxy_headers": False}
"""How uvicorn must run the app: the app alone decides whose forwarded headers to trust (`proxies.py`),
so uvicorn must not rewrite the client address from them first."""

ROUTERS = (
    health.router,
    users.router,
    memories.router,
    search.router,
    knowledge.router,
    learning.router,
    conversation.router,
    lifecycle.router,
    audit.router,
)


def create_app(
    settings: Settings | None = None, *, memory: Memory | None = None, config: ServerConfig | None = None
) -> FastAPI:
    """Build the app. With `memory`, the caller owns it; otherwise it is opened from `settings`
    (MEMSTRATA_* env) when the app starts and closed when it stops."""
    config = config or ServerConfig()
    metrics = Metrics()
    state_box: dict[str, ServerState] = {}

    def install_state(target: FastAPI, mem: Memory) -> ServerState:
        state = ServerState(
            memory=mem, keys=KeyRing(mem.store), config=config, metrics=metrics, audit=AuditLog(mem.store)
        )
        target.state.memstrata = state
        state_box["state"] = state
        return state

    mcp = None
    if config.mcp:
        from .mcp import build_http_endpoint

        mcp = build_http_endpoint(lambda: state_box["state"], config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            mem = memory
            if mem is None:
                mem = await anyio.to_thread.run_sync(lambda: Memory(settings=settings or Settings()))
                stack.callback(mem.close)
            install_state(app, mem)
            if config.worker:
                mem.start_worker(interval=config.worker_interval)
                stack.callback(mem.stop_worker)
            if not config.auth_enabled:
                logger.warning("AUTHENTICATION IS DISABLED (%s)", INSECURE_WARNING)
            if mcp is not None:
                await stack.enter_async_context(mcp[0].session_manager.run())
            yield

    app = FastAPIOffline(  # /docs and /redoc from assets bundled in the package: no CDN, works offline
        static_url=DOCS_ASSETS_URL,
        title="memstrata",
        version=__version__,
        summary="Layered long-term memory for AI agents.",
        description=_DESCRIPTION,
        lifespan=lifespan,
        dependencies=[Depends(reject_unknown_query)],
    )
    if memory is not None:
        install_state(app, memory)
    install_error_handlers(app)
    for router in ROUTERS:
        unshaped = [r.path for r in router.routes if isinstance(r, APIRoute) and not isinstance(r, ShapedRoute)]
        if unshaped:  # every answer must pass the response rule of shaping.py
            raise TypeError(f"routes {unshaped} are not ShapedRoutes: build their router with route_class=ShapedRoute")
        app.include_router(router)

    if mcp is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp[1], methods=["GET", "POST", "DELETE"]))
    if config.ui:
        app.mount("/ui", StaticFiles(directory=UI_DIR, html=True), name="ui")

        @app.get("/", include_in_schema=False)
        def root() -> RedirectResponse:
            return RedirectResponse("/ui/")

    app.openapi = functools.partial(_openapi, app)  # type: ignore[method-assign]
    app.add_middleware(HeaderMiddleware, name="Content-Security-Policy", value=DOCS_POLICY, paths=DOCS_PAGES)
    if not config.auth_enabled:
        app.add_middleware(HeaderMiddleware, name=INSECURE_HEADER, value=INSECURE_WARNING)
    if config.ui:
        app.add_middleware(UiSecurityHeaders)
    app.add_middleware(BodyLimitMiddleware, max_bytes=config.max_body_bytes, max_import_bytes=config.max_import_bytes)
    app.add_middleware(
        RateLimitMiddleware,
        limiter=RateLimiter(per_key=config.rate_limit, per_failing_source=config.auth_failure_limit),
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(TrustedProxyMiddleware, networks=parse_networks(config.trusted_proxies))  # outermost
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with error responses documented as application/problem+json (what they are)."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=app.description,
            routes=app.routes,
        )
        problem_ref = {"$ref": "#/components/schemas/Problem"}
        for operation in (op for path in schema["paths"].values() for op in path.values()):
            document_permission(operation)
            for response in operation.get("responses", {}).values():
                content = response.get("content", {})
                if content.get("application/json", {}).get("schema") == problem_ref:
                    content[PROBLEM_MEDIA_TYPE] = content.pop("application/json")
        app.openapi_schema = schema
    return app.openapi_schema


def document_permission(operation: dict[str, Any]) -> None:
    """Name the permission an operation needs (its bearer security scope) in `x-memstrata-permission`
    and in its description, where a reader of /docs sees it."""
    scopes = sorted(
        {scope for requirement in operation.get("security", []) for s in requirement.values() for scope in s}
    )
    if not operation.get("security"):
        return
    operation["x-memstrata-permission"] = scopes[0] if scopes else None
    needed = f"the `{scopes[0]}` permission" if scopes else "any valid key"
    text = operation.get("description", "")
    operation["description"] = f"{text}\n\n**Needs:** {needed} (see `memstrata keys create --role`).".strip()


class HeaderMiddleware:
    """Add one header to every HTTP response (the development-mode warning), or to those of `paths`."""

    def __init__(self, app: ASGIApp, *, name: str, value: str, paths: frozenset[str] | None = None) -> None:
        self.app = app
        self.header = (name.lower().encode("latin-1"), value.encode("latin-1"))
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.paths is not None and scope["path"] not in self.paths):
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, send_with_header)


_DESCRIPTION = """
REST API of the memstrata memory server.

**Auth.** Send an API key as `Authorization: Bearer msk_...` (create one with `memstrata keys create`).
A key belongs to one tenant; a key bound to a user may only touch that user (403 otherwise), a key bound
to no user acts for every user of the tenant. Each key has a role — `admin`, `user`, `read-only`,
`ingest-only`, `privacy` — that grants permissions (`read`, `write`, `export`, `erase`, `admin`); each
operation names the one it needs (its security scope and `x-memstrata-permission`), else 403.
Errors are `application/problem+json` documents.

**Scope.** Every memory belongs to the user in the path (`/v1/users/{user_id}/...`), optionally narrowed
to an agent and a session. Ids are 1-128 letters, digits or `_ . : @ + -`.
"""
