"""Security headers of the Web UI (/ui): a content security policy the UI passes, plus anti-framing,
no MIME sniffing and no referrer. The UI loads only its own files (`app.js` as a module, `app.css`),
has no inline script or style and calls only this server's API, so every fetch directive is `'self'`
or `'none'`."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

UI_CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)
UI_HEADERS = {
    "Content-Security-Policy": UI_CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


class UiSecurityHeaders:
    """Add `UI_HEADERS` to every response under `prefix`."""

    def __init__(self, app: ASGIApp, *, prefix: str = "/ui") -> None:
        self.app = app
        self.prefix = prefix
        self.headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in UI_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)
