"""resolve_embedder: spec strings → embedders; environment read at resolve time."""

from __future__ import annotations

import pytest

from memstrata.embedders import (
    E5Embedder,
    Embedder,
    HashingEmbedder,
    OpenAICompatibleEmbedder,
    StaticEmbedder,
    resolve_embedder,
)
from memstrata.errors import ConfigurationError


@pytest.mark.parametrize(
    ("spec", "kind", "name", "dimensions"),
    [
        pytest.param(None, StaticEmbedder, "static-m2v-minilm-256", 256, id="none"),
        pytest.param("", StaticEmbedder, "static-m2v-minilm-256", 256, id="empty"),
        pytest.param("static", StaticEmbedder, "static-m2v-minilm-256", 256, id="static"),
        pytest.param(" Static ", StaticEmbedder, "static-m2v-minilm-256", 256, id="static-spaced"),
        pytest.param("hashing", HashingEmbedder, "hashing-64", 64, id="hashing"),
        pytest.param("hashing:32", HashingEmbedder, "hashing-32", 32, id="hashing-dim"),
        pytest.param("e5", E5Embedder, "e5-multilingual-small-q4", 384, id="e5"),
    ],
)
def test_local_specs(spec: str | None, kind: type, name: str, dimensions: int) -> None:
    embedder = resolve_embedder(spec, environ={})
    assert isinstance(embedder, kind)
    assert isinstance(embedder, Embedder)
    assert embedder.name == name
    assert embedder.dimensions == dimensions


def test_default_static_instance_is_shared() -> None:
    assert resolve_embedder(None) is resolve_embedder("static")


def test_openai_spec_reads_base_url_and_key_from_environ() -> None:
    environ = {"MEMSTRATA_EMBEDDER_BASE_URL": "http://localhost:11434/v1/", "OPENAI_API_KEY": "sk-x"}
    embedder = resolve_embedder("openai:nomic-embed-text:latest", environ=environ)
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.model == "nomic-embed-text:latest"
    assert embedder.url == "http://localhost:11434/v1/embeddings"
    assert embedder.name == "openai:nomic-embed-text:latest"
    assert "sk-x" not in repr(embedder)


def test_openai_known_model_has_its_dimensions_without_a_request() -> None:
    embedder = resolve_embedder("openai:text-embedding-3-small", environ={"MEMSTRATA_EMBEDDER_API_KEY": "k"})
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.url == "https://api.openai.com/v1/embeddings"
    assert embedder.dimensions == 1536


def test_openai_spec_reads_os_environ_when_resolving(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.delenv("MEMSTRATA_EMBEDDER_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder = resolve_embedder("openai:local-model")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.url == "http://127.0.0.1:8000/v1/embeddings"


@pytest.mark.parametrize(
    ("spec", "environ", "match"),
    [
        pytest.param("nope", {}, "known prefixes: e5, hashing, openai, static", id="unknown"),
        pytest.param("sentence-transformers:x", {}, "known prefixes", id="unknown-with-arg"),
        pytest.param("hashing:abc", {}, "DIM must be an integer", id="hashing-not-int"),
        pytest.param("hashing:1", {}, "DIM must be an integer >= 2", id="hashing-too-small"),
        pytest.param("static:/some/path", {}, "takes no argument", id="static-arg"),
        pytest.param("e5:large", {}, "takes no argument", id="e5-arg"),
        pytest.param("openai", {}, "needs a model name", id="openai-no-model"),
        pytest.param("openai:text-embedding-3-small", {}, "OPENAI_API_KEY", id="openai-no-key"),
        pytest.param("openai:m", {"MEMSTRATA_EMBEDDER_BASE_URL": "localhost:11434"}, "http", id="openai-bad-url"),
    ],
)
def test_bad_specs_are_configuration_errors(spec: str, environ: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        resolve_embedder(spec, environ=environ)
