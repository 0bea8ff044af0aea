"""Request body size limits (413), enforced on the declared length and on the bytes actually read."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import problem


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, max_bytes: int, max_import_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_import_bytes = max_import_bytes

    def limit_for(self, path: str) -> int:
        return self.max_import_bytes if path.endswith("/import") else self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _too_large(limit, scope, receive, send)
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, f"request body exceeds {limit} bytes")
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except HTTPException as exc:
            if exc.status_code != 413 or started:
                raise
            await _too_large(limit, scope, receive, send)


async def _too_large(limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    response = problem(413, f"request body exceeds {limit} bytes", headers={"Connection": "close"})
    await response(scope, receive, send)
