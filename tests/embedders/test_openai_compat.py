"""OpenAICompatibleEmbedder against a real HTTP server on 127.0.0.1 speaking the embeddings protocol."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from memstrata.embedders import Embedder, HashingEmbedder, OpenAICompatibleEmbedder
from memstrata.errors import InvalidInput, ProviderError

from .embeddings_server import EmbeddingsServer, Reply, embeddings_server

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    with embeddings_server(dimensions=8, api_key=KEY) as running:
        yield running


def make(server: EmbeddingsServer, **kwargs: Any) -> OpenAICompatibleEmbedder:
    options: dict[str, Any] = {"api_key": KEY, "dimensions": 8, "backoff_seconds": 0.01, "timeout": 5.0}
    options.update(kwargs)
    return OpenAICompatibleEmbedder(server.base_url, "fake-embed", **options)


def test_embeds_in_input_order_and_normalizes(server: EmbeddingsServer) -> None:
    texts = ["green tea in the morning", "a dog named Biscuit", "green tea again"]
    with make(server) as embedder:
        assert isinstance(embedder, Embedder)
        vectors = embedder.embed_documents(texts)
    expected = HashingEmbedder(8).embed_documents(texts)  # what the server hashed, before scaling
    np.testing.assert_allclose(vectors, expected, atol=1e-5)  # reordered by index, unit rows
    [request] = server.requests
    assert request.path == "/v1/embeddings"
    assert request.json == {"model": "fake-embed", "input": texts}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert embedder.name == "openai:fake-embed"


def test_query_is_one_vector(server: EmbeddingsServer) -> None:
    vector = make(server).embed_query("where did I put my keys")
    assert vector.shape == (8,)
    assert vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_splits_into_batches(server: EmbeddingsServer) -> None:
    texts = [f"text {i} about topic {i}" for i in range(5)]
    vectors = make(server, batch_size=2).embed_documents(texts)
    assert [len(request.json["input"]) for request in server.requests] == [2, 2, 1]
    np.testing.assert_allclose(vectors, HashingEmbedder(8).embed_documents(texts), atol=1e-5)


def test_blank_texts_are_zero_rows_and_not_sent(server: EmbeddingsServer) -> None:
    vectors = make(server).embed_documents(["", "real text", "   "])
    assert [request.json["input"] for request in server.requests] == [["real text"]]
    assert not vectors[0].any() and not vectors[2].any()
    assert np.linalg.norm(vectors[1]) == pytest.approx(1.0, abs=1e-5)


def test_empty_list_makes_no_request(server: EmbeddingsServer) -> None:
    assert make(server).embed_documents([]).shape == (0, 8)
    assert server.requests == []


def test_dimensions_are_learned_from_a_probe_when_not_given(server: EmbeddingsServer) -> None:
    embedder = make(server, dimensions=None)
    assert embedder.dimensions == 8
    assert len(server.requests) == 1
    assert embedder.embed_query("hello").shape == (8,)


def test_request_dimensions_sends_the_size(server: EmbeddingsServer) -> None:
    vectors = make(server, dimensions=4, request_dimensions=True).embed_documents(["short vectors please"])
    assert server.requests[0].json["dimensions"] == 4
    assert vectors.shape == (1, 4)


def test_retries_429_and_honours_retry_after(server: EmbeddingsServer) -> None:
    server.script(Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0.3"}))
    embedder = make(server, backoff_seconds=20.0)  # the header, not the 20 s backoff, decides the wait
    started = time.monotonic()
    vectors = embedder.embed_documents(["hello there"])
    elapsed = time.monotonic() - started
    assert vectors.shape == (1, 8)
    assert len(server.requests) == 2
    assert 0.3 <= elapsed < 5.0


def test_retries_5xx_then_succeeds(server: EmbeddingsServer) -> None:
    server.script(Reply(status=503), Reply(status=502, raw=b"<html>bad gateway</html>"))
    assert make(server).embed_query("eventually").shape == (8,)
    assert len(server.requests) == 3


def test_500_until_retries_are_exhausted(server: EmbeddingsServer) -> None:
    server.script(*[Reply(status=500, body={"error": {"message": f"boom, key was {KEY}"}})] * 3)
    with pytest.raises(ProviderError) as caught:
        make(server, max_retries=2).embed_query("never works")
    message = str(caught.value)
    assert server.base_url + "/embeddings" in message
    assert "3 attempt(s)" in message and "HTTP 500" in message and "boom" in message
    assert KEY not in message
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server: EmbeddingsServer) -> None:
    server.script(Reply(status=400, body={"error": {"message": "input too long"}}))
    with pytest.raises(ProviderError, match="refused the request: HTTP 400: input too long"):
        make(server).embed_query("x")
    assert len(server.requests) == 1


def test_wrong_api_key_is_reported_without_the_key(server: EmbeddingsServer) -> None:
    with pytest.raises(ProviderError, match="HTTP 401") as caught:
        make(server, api_key="sk-wrong-key-000").embed_query("x")
    assert "sk-wrong-key-000" not in str(caught.value)


def test_malformed_json_is_a_provider_error_without_retry(server: EmbeddingsServer) -> None:
    server.script(Reply(raw=b'{"data": [ not json'))
    with pytest.raises(ProviderError, match="invalid JSON"):
        make(server).embed_query("x")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        pytest.param(Reply(body={"object": "list"}), "no 'data' list", id="no-data"),
        pytest.param(Reply(body={"data": []}), "0 embeddings for 2 inputs", id="wrong-count"),
        pytest.param(
            Reply(body={"data": [{"index": 0, "embedding": [1.0] * 8}, {"index": 0, "embedding": [1.0] * 8}]}),
            "duplicate or out-of-range index",
            id="duplicate-index",
        ),
        pytest.param(
            Reply(body={"data": [{"index": 0, "embedding": [1.0] * 8}, {"index": 1, "embedding": ["a"] * 8}]}),
            "non-numbers",
            id="non-numeric",
        ),
        pytest.param(
            Reply(body={"data": [{"index": 0, "embedding": [1.0] * 8}, {"index": 1, "embedding": [1.0] * 7}]}),
            "different or zero lengths",
            id="ragged",
        ),
        pytest.param(Reply(dimensions=4), "4 dimensions, expected 8", id="wrong-dimension"),
    ],
)
def test_unusable_responses_are_provider_errors(server: EmbeddingsServer, reply: Reply, reason: str) -> None:
    server.script(reply)
    with pytest.raises(ProviderError, match="unusable response") as caught:
        make(server).embed_documents(["one", "two"])
    assert reason in str(caught.value)


def test_timeout_is_retried_then_reported(server: EmbeddingsServer) -> None:
    server.script(Reply(delay=1.0), Reply(delay=1.0))
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"2 attempt\(s\): timed out after 0.2 s"):
        make(server, timeout=0.2, max_retries=1).embed_query("slow")
    assert time.monotonic() - started < 2.0
    assert len(server.requests) == 2


def test_timeout_then_success(server: EmbeddingsServer) -> None:
    server.script(Reply(delay=1.0))
    assert make(server, timeout=0.2).embed_query("second try is fast").shape == (8,)


def test_connection_refused_names_the_url_without_credentials() -> None:
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAICompatibleEmbedder(
        f"http://user:s3cret@127.0.0.1:{port}/v1?api-key=s3cret",
        "m",
        dimensions=8,
        max_retries=1,
        backoff_seconds=0.01,
    )
    with pytest.raises(ProviderError, match="connection failed") as caught:
        embedder.embed_query("x")
    message = str(caught.value)
    assert f"http://127.0.0.1:{port}/v1/embeddings" in message
    assert "s3cret" not in message and "s3cret" not in repr(embedder)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"base_url": "ftp://example.com/v1"}, "http", id="scheme"),
        pytest.param({"model": ""}, "model name", id="no-model"),
        pytest.param({"dimensions": 0}, "dimensions", id="zero-dimensions"),
        pytest.param({"request_dimensions": True}, "needs dimensions", id="request-without-size"),
        pytest.param({"batch_size": 0}, "batch_size", id="batch-size"),
    ],
)
def test_invalid_construction(kwargs: dict[str, Any], match: str) -> None:
    arguments: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    arguments.update(kwargs)
    with pytest.raises(InvalidInput, match=match):
        OpenAICompatibleEmbedder(**arguments)
