"""One adapter for every server that speaks OpenAI's `POST /v1/embeddings` (OpenAI, Ollama, vLLM, LM Studio,
llama.cpp server, TEI...).

Requests are batched; 429, 5xx, connection errors and timeouts are retried with exponential backoff
(a `Retry-After` header wins when present). Failures raise `ProviderError` naming the endpoint URL,
never the API key. Responses are validated (shape, order, dimension, finite numbers) and rows normalized.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from ..errors import InvalidInput, ProviderError
from .base import Vectors, normalize_rows
from .static import as_text_list

RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
MAX_BACKOFF_SECONDS = 30.0
_ERROR_SNIPPET = 300


class OpenAICompatibleEmbedder:
    """Embeddings from an OpenAI-compatible endpoint.

    `base_url` is the API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`; requests go
    to `{base_url}/embeddings`. `dimensions` is the vector size the model returns; when it is None it is
    learned from the first response (reading the `dimensions` property before any call sends one short
    probe request). With `request_dimensions=True` the size is also sent in the request, for models that
    can shorten their vectors (OpenAI text-embedding-3-*). Empty or blank texts are not sent: they embed
    as zero rows, as with the static embedder.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        request_dimensions: bool = False,
        timeout: float = 30.0,
        max_retries: int = 3,
        batch_size: int = 128,
        backoff_seconds: float = 0.5,
    ) -> None:
        if not model:
            raise InvalidInput("an embedding model name is required")
        if dimensions is not None and dimensions < 1:
            raise InvalidInput("dimensions must be >= 1")
        if request_dimensions and dimensions is None:
            raise InvalidInput("request_dimensions=True needs dimensions")
        if batch_size < 1 or max_retries < 0 or timeout <= 0 or backoff_seconds < 0:
            raise InvalidInput("batch_size >= 1, max_retries >= 0, timeout > 0 and backoff_seconds >= 0 required")
        try:
            root = httpx.URL(base_url.rstrip("/"))
        except (httpx.InvalidURL, TypeError) as exc:
            raise InvalidInput(f"invalid embedder base URL: {exc}") from None
        if root.scheme not in ("http", "https") or not root.host:
            raise InvalidInput("the embedder base URL must be an http(s) URL such as http://localhost:11434/v1")
        endpoint = root.copy_with(path=root.path.rstrip("/") + "/embeddings")
        self._url = str(endpoint)
        self._display_url = _display(endpoint)
        self._model = model
        self._api_key = api_key
        self._dimensions = dimensions
        self._request_dimensions = request_dimensions
        self._timeout = timeout
        self._max_retries = max_retries
        self._batch_size = batch_size
        self._backoff = backoff_seconds
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    @property
    def model(self) -> str:
        return self._model

    @property
    def url(self) -> str:
        """The endpoint, without credentials or query string."""
        return self._display_url

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self.embed_documents(["dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        batch = as_text_list(texts)
        out: np.ndarray | None = None
        wanted = [i for i, text in enumerate(batch) if text.strip()]
        for start in range(0, len(wanted), self._batch_size):
            indices = wanted[start : start + self._batch_size]
            vectors = self._embed_batch([batch[i] for i in indices])
            if out is None:
                out = np.zeros((len(batch), vectors.shape[1]), dtype=np.float32)
            out[indices] = vectors
        if out is None:  # nothing sent: no texts, or only blank ones
            return np.zeros((len(batch), self._dimensions or 0), dtype=np.float32)
        return normalize_rows(out)

    def embed_query(self, text: str, /) -> Vectors:
        if not isinstance(text, str):
            raise InvalidInput(f"embed_query takes a str, not {type(text).__name__}")
        return self.embed_documents([text])[0]

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedder(url={self._display_url!r}, model={self._model!r})"

    # -- one request, with retries ---------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                headers = {"User-Agent": "memstrata"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(timeout=httpx.Timeout(self._timeout), headers=headers)
            return self._client

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self._model, "input": texts}
        if self._request_dimensions:
            payload["dimensions"] = self._dimensions
        body = self._post(payload)
        vectors = _parse_embeddings(body, len(texts), self._dimensions, self._display_url)
        if self._dimensions is None:
            self._dimensions = vectors.shape[1]
        return vectors

    def _post(self, payload: dict[str, Any]) -> Any:
        client = self._http()
        attempts = self._max_retries + 1
        problem = "no attempt made"
        for attempt in range(attempts):
            retry_after: float | None = None
            try:
                response = client.post(self._url, json=payload)
            except httpx.TimeoutException:
                problem = f"timed out after {self._timeout:g} s"
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.status_code < 300:
                    try:
                        return response.json()
                    except ValueError:
                        raise ProviderError(
                            f"embedding endpoint {self._display_url} returned invalid JSON "
                            f"(HTTP {response.status_code}): {self._redact(_snippet(response.text))!r}"
                        ) from None
                problem = f"HTTP {response.status_code}: {self._redact(_error_message(response))}"
                if response.status_code not in RETRY_STATUSES:
                    raise ProviderError(f"embedding endpoint {self._display_url} refused the request: {problem}")
                retry_after = _retry_after_seconds(response.headers.get("Retry-After"))
            if attempt + 1 < attempts:
                time.sleep(self._delay(attempt, retry_after))
        raise ProviderError(f"embedding endpoint {self._display_url} failed after {attempts} attempt(s): {problem}")

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_BACKOFF_SECONDS)
        exponential = self._backoff * (2**attempt)
        return min(exponential * (0.5 + random.random() / 2), MAX_BACKOFF_SECONDS)


def _parse_embeddings(body: Any, expected: int, dimensions: int | None, url: str) -> np.ndarray:
    """Validate an OpenAI embeddings response; return a (expected, dim) float32 matrix in input order."""

    def bad(reason: str) -> ProviderError:
        return ProviderError(f"embedding endpoint {url} returned an unusable response: {reason}")

    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise bad("no 'data' list in the JSON body")
    data: list[Any] = body["data"]
    if len(data) != expected:
        raise bad(f"{len(data)} embeddings for {expected} inputs")
    rows: list[Any] = [None] * expected
    for position, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
            raise bad(f"item {position} has no 'embedding' list")
        index = item.get("index", position)
        if not isinstance(index, int) or not 0 <= index < expected or rows[index] is not None:
            raise bad(f"item {position} has a missing, duplicate or out-of-range index {index!r}")
        rows[index] = item["embedding"]
    lengths = {len(row) for row in rows}
    if len(lengths) != 1 or 0 in lengths:
        raise bad(f"embeddings of different or zero lengths {sorted(lengths)}")
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        raise bad("embeddings contain non-numbers") from None
    if not np.isfinite(matrix).all():
        raise bad("embeddings contain NaN or infinite values")
    if dimensions is not None and matrix.shape[1] != dimensions:
        raise bad(f"vectors have {matrix.shape[1]} dimensions, expected {dimensions}")
    return matrix


def _retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` is delta-seconds or an HTTP date; anything unreadable is ignored."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _error_message(response: httpx.Response) -> str:
    """The `error.message` of an OpenAI-style error body, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return _snippet(response.text) or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _snippet(error["message"])
        if isinstance(error, str):
            return _snippet(error)
    return _snippet(response.text)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_SNIPPET else text[:_ERROR_SNIPPET] + "..."


def _display(url: httpx.URL) -> str:
    """The URL without user info or query string, safe to show in errors and logs."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{host}{port}{url.path.rstrip('/')}"
