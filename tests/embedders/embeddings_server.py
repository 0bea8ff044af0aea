"""A real HTTP server on 127.0.0.1 that speaks OpenAI's POST /v1/embeddings protocol.

It runs in a thread on a free port and records every request. Without a script it answers like a real
server: one deterministic vector per input (hashed bag of words, deliberately not normalized, listed in
reverse order with their `index`). Scripted `Reply`s override the next answers, e.g. a 429 with
Retry-After, a 500, a malformed body or a slow answer::

    with embeddings_server(dimensions=8) as server:
        server.script(Reply(status=429, headers={"Retry-After": "0.2"}))
        embedder = OpenAICompatibleEmbedder(server.base_url, "fake-embed")
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from memstrata.embedders.hashing import HashingEmbedder


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `body=None` with status 200 means "embed the request for real"."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    dimensions: int | None = None


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    json: Any


class EmbeddingsServer:
    def __init__(self, dimensions: int, api_key: str | None) -> None:
        self.dimensions = dimensions
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else Reply()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def embed(self, texts: list[str], dimensions: int) -> dict[str, Any]:
        vectors = HashingEmbedder(dimensions).embed_documents(texts) * 3.0  # unnormalized on purpose
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in np.round(vector, 6)]}
            for i, vector in enumerate(vectors)
        ]
        tokens = sum(len(text.split()) for text in texts)
        return {
            "object": "list",
            "data": data[::-1],
            "model": "fake-embed",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)


def _handler(server: EmbeddingsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = None
            server.record(RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, payload))
            if self.path != "/v1/embeddings":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                return self._send(401, {"error": {"message": "Incorrect API key provided"}})
            inputs = payload.get("input") if isinstance(payload, dict) else None
            if isinstance(inputs, str):
                inputs = [inputs]
            if not (isinstance(payload, dict) and payload.get("model") and isinstance(inputs, list)):
                return self._send(400, {"error": {"message": "'model' and 'input' are required"}})
            if not all(isinstance(text, str) and text for text in inputs):
                return self._send(400, {"error": {"message": "'input' must be non-empty strings"}})
            reply = server.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.raw is not None:
                return self._send(reply.status, reply.raw, reply.headers)
            if reply.body is not None or reply.status != 200:
                body = reply.body if reply.body is not None else {"error": {"message": f"status {reply.status}"}}
                return self._send(reply.status, body, reply.headers)
            dimensions = reply.dimensions or payload.get("dimensions") or server.dimensions
            return self._send(200, server.embed(inputs, int(dimensions)), reply.headers)

        def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

    return Handler


@contextlib.contextmanager
def embeddings_server(dimensions: int = 8, api_key: str | None = None) -> Iterator[EmbeddingsServer]:
    server = EmbeddingsServer(dimensions, api_key)
    server.start()
    try:
        yield server
    finally:
        server.stop()
