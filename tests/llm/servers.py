"""Real HTTP servers on 127.0.0.1 that speak the OpenAI chat-completions and Anthropic Messages protocols.

Each server runs in a thread on a random port, answers from a per-test script and records every
request. Reusable by any test that needs an LLM endpoint::

    with openai_server() as server:
        server.script(completion('{"facts": []}'), error(429, "slow down", headers={"Retry-After": "1"}))
        llm = OpenAICompatibleLLM(server.base_url, "fake-model")
        ...
        assert server.requests[0].json["model"] == "fake-model"

A script entry is a `Reply`, a plain string (a completion with that text) or a callable that
receives the `RecordedRequest` and returns one of those. An empty script answers HTTP 500.
`truncated(text)` is an answer cut off at the token limit (OpenAI `finish_reason: "length"`,
Anthropic `stop_reason: "max_tokens"`), `withheld(text)` one the provider filtered or refused,
`with_chatter(text)` an answer wrapped in the preamble and closing remarks chat models add, and
`server.fail_on(n, reply)` makes the n-th well-formed request (1-based) answer `reply` instead of
the script (a failure part-way through a run of calls).
Like the real APIs, the servers refuse malformed requests (missing model/messages, a "system"
role in Anthropic messages, missing auth headers) without consuming a script entry.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from memstrata.llm import AnthropicLLM, OpenAICompatibleLLM

API_KEY = "sk-test-secret-0123456789"
"""The key the fixtures' servers require; tests assert it never appears in error messages."""
Protocol = Literal["openai", "anthropic"]
PATHS: dict[Protocol, str] = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
_FINISH: dict[Protocol, dict[str, str]] = {
    "openai": {"refusal": "content_filter"},
    "anthropic": {"stop": "end_turn", "length": "max_tokens", "refusal": "refusal"},
}
"""Each protocol's spelling of the normalized finish reasons (`Reply.finish_reason`)."""


@dataclass(frozen=True)
class Reply:
    """What the server sends for one request.

    `text` → a protocol-shaped completion; `error` → a protocol-shaped error body;
    otherwise `body` is sent as is (dict/list as JSON, str as text). `delay` seconds pass first.
    Token counts default to word counts of the request and of `text`.
    """

    text: str | None = None
    status: int = 200
    error: str | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str = "stop"
    model: str | None = None


def completion(text: str, **kwargs: Any) -> Reply:
    return Reply(text=text, **kwargs)


def error(status: int, message: str, **kwargs: Any) -> Reply:
    return Reply(status=status, error=message, **kwargs)


def slow(text: str, delay: float) -> Reply:
    return Reply(text=text, delay=delay)


def truncated(text: str, **kwargs: Any) -> Reply:
    """An answer cut off at the request's token limit."""
    return Reply(text=text, finish_reason="length", **kwargs)


def withheld(text: str = "", **kwargs: Any) -> Reply:
    """An answer the provider stopped (OpenAI's content filter, Anthropic's refusal)."""
    return Reply(text=text, finish_reason="refusal", **kwargs)


def with_chatter(text: str) -> str:
    """`text` as chat models like to hand it over: a preamble before, an offer and a question after."""
    return f"Sure! Here is the updated summary: {text}\n\nI hope this helps! Let me know if you'd like any changes."


ScriptEntry = Reply | str | Callable[["RecordedRequest"], "Reply | str"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    received_at: float

    @property
    def json(self) -> Any:
        return json.loads(self.raw or b"null")

    @property
    def prompt_words(self) -> int:
        body = self.json if isinstance(self.json, dict) else {}
        parts = [str(body.get("system", ""))]
        for message in body.get("messages", []):
            content = message.get("content", "")
            if isinstance(content, list):
                content = " ".join(block.get("text", "") for block in content)
            parts.append(str(content))
        return len(" ".join(parts).split())


def _openai_body(reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
    text = reply.text or ""
    prompt = request.prompt_words if reply.input_tokens is None else reply.input_tokens
    output = len(text.split()) if reply.output_tokens is None else reply.output_tokens
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": _FINISH["openai"].get(reply.finish_reason, reply.finish_reason),
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output},
    }


def _anthropic_body(reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
    text = reply.text or ""
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": _FINISH["anthropic"].get(reply.finish_reason, reply.finish_reason),
        "stop_sequence": None,
        "usage": {
            "input_tokens": request.prompt_words if reply.input_tokens is None else reply.input_tokens,
            "output_tokens": len(text.split()) if reply.output_tokens is None else reply.output_tokens,
        },
    }


def _error_body(protocol: Protocol, status: int, message: str) -> dict[str, Any]:
    if protocol == "anthropic":
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error"}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out and hang up are expected here; stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.fake.handle(self)

    def do_GET(self) -> None:
        self.server.fake.handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FakeLLMServer:
    """One scripted protocol server. Use `openai_server()` / `anthropic_server()` to run it."""

    def __init__(self, protocol: Protocol, *, model: str = "fake-model", api_key: str | None = None) -> None:
        self.protocol = protocol
        self.model = model
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._script: deque[ScriptEntry] = deque()
        self._failures: dict[int, Reply] = {}
        self._answered = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """What a client is configured with: the API root (``…/v1`` for OpenAI-compatible servers)."""
        return f"{self.url}/v1" if self.protocol == "openai" else self.url

    def script(self, *entries: ScriptEntry) -> FakeLLMServer:
        with self._lock:
            self._script.extend(entries)
        return self

    def fail_on(self, call: int, reply: Reply) -> FakeLLMServer:
        """Answer the `call`-th well-formed request (1-based, counting every one so far) with `reply`,
        leaving the script for the others."""
        with self._lock:
            self._failures[call] = reply
        return self

    @property
    def remaining(self) -> int:
        return len(self._script)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- request handling (runs in the server's threads) ----------------------
    def handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        request = RecordedRequest(
            method=handler.command,
            path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            raw=handler.rfile.read(length) if length else b"",
            received_at=time.monotonic(),
        )
        with self._lock:
            self.requests.append(request)
        reply = self._refusal(request) or self._next(request)
        if reply.delay and self._stopping.wait(reply.delay):
            handler.close_connection = True
            return
        self._send(handler, reply, request)

    def _refusal(self, request: RecordedRequest) -> Reply | None:
        """What the real API answers to a malformed request, or None if it is well-formed."""
        if request.method != "POST" or request.path != PATHS[self.protocol]:
            return error(404, f"no route for {request.method} {request.path}")
        auth = self._auth_problem(request.headers)
        if auth:
            return auth
        try:
            body = request.json
        except ValueError:
            return error(400, "request body is not JSON")
        return self._shape_problem(body if isinstance(body, dict) else {})

    def _auth_problem(self, headers: dict[str, str]) -> Reply | None:
        if self.protocol == "anthropic":
            if "x-api-key" not in headers:
                return error(401, "x-api-key header is required")
            if "anthropic-version" not in headers:
                return error(400, "anthropic-version header is required")
            if self.api_key is not None and headers["x-api-key"] != self.api_key:
                return error(401, "invalid x-api-key")
        elif self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Incorrect API key provided")
        return None

    def _shape_problem(self, body: dict[str, Any]) -> Reply | None:
        if not body.get("model") or not isinstance(body.get("messages"), list) or not body["messages"]:
            return error(400, "model and a non-empty messages list are required")
        if self.protocol == "anthropic":
            if "max_tokens" not in body:
                return error(400, "max_tokens: Field required")
            if any(m.get("role") not in ("user", "assistant") for m in body["messages"]):
                return error(400, "messages: roles must be 'user' or 'assistant'; use the top-level system field")
        return None

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._answered += 1
            failure = self._failures.pop(self._answered, None)
            if failure is not None:
                return failure
            entry: ScriptEntry = self._script.popleft() if self._script else error(500, "script exhausted")
        if callable(entry):
            entry = entry(request)
        return Reply(text=entry) if isinstance(entry, str) else entry

    def _payload(self, reply: Reply, request: RecordedRequest) -> bytes:
        if reply.error is not None:
            data: Any = _error_body(self.protocol, reply.status, reply.error)
        elif reply.text is not None:
            model = reply.model or self._requested_model(request)
            build = _anthropic_body if self.protocol == "anthropic" else _openai_body
            data = build(reply, request, model)
        else:
            data = reply.body
        return data.encode() if isinstance(data, str) else json.dumps(data).encode()

    def _requested_model(self, request: RecordedRequest) -> str:
        body = request.json
        return str(body.get("model") or self.model) if isinstance(body, dict) else self.model

    def _send(self, handler: _Handler, reply: Reply, request: RecordedRequest) -> None:
        payload = self._payload(reply, request)
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True


@contextlib.contextmanager
def running(protocol: Protocol, **kwargs: Any) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer(protocol, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def openai_server(**kwargs: Any) -> contextlib.AbstractContextManager[FakeLLMServer]:
    """A running OpenAI-compatible server (`base_url` ends with /v1)."""
    return running("openai", **kwargs)


def anthropic_server(**kwargs: Any) -> contextlib.AbstractContextManager[FakeLLMServer]:
    """A running Anthropic Messages server."""
    return running("anthropic", **kwargs)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (for connection-refused tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def client_for(
    server: FakeLLMServer, *, api_key: str = API_KEY, **overrides: Any
) -> OpenAICompatibleLLM | AnthropicLLM:
    """The memstrata client for `server`'s protocol, with test-sized delays."""
    options: dict[str, Any] = {"timeout": 5.0, "max_retries": 3, "backoff": 0.01, "max_delay": 2.0}
    options.update(overrides)
    if server.protocol == "anthropic":
        return AnthropicLLM("claude-test", api_key, server.base_url, **options)
    return OpenAICompatibleLLM(server.base_url, "gpt-test", api_key, **options)
