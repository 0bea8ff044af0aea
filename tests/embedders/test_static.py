"""The shipped static model: offline, deterministic, normalized, equal to model2vec's own encoder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from memstrata.embedders import Embedder, StaticEmbedder
from memstrata.embedders.static import DEFAULT_MODEL_DIR
from memstrata.errors import ConfigurationError, InvalidInput

REFERENCE = Path(__file__).parent / "data" / "m2v_reference.json"


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    embedder = StaticEmbedder()
    embedder.load()
    return embedder


def test_satisfies_protocol_and_identity(static: StaticEmbedder) -> None:
    assert isinstance(static, Embedder)
    assert static.name == "static-m2v-minilm-256"
    assert static.dimensions == 256


def test_model_files_ship_with_licence_and_notice() -> None:
    names = {path.name for path in DEFAULT_MODEL_DIR.iterdir()}
    assert {"embeddings.npy", "tokenizer.json", "config.json", "LICENSE", "NOTICE"} <= names
    assert "Apache License" in (DEFAULT_MODEL_DIR / "LICENSE").read_text()
    notice = (DEFAULT_MODEL_DIR / "NOTICE").read_text()
    assert "all-MiniLM-L6-v2" in notice and "model2vec" in notice and "PCA" in notice and "SIF" in notice
    size = sum(path.stat().st_size for path in DEFAULT_MODEL_DIR.iterdir())
    assert size < 16 * 2**20


def test_matches_model2vec_reference_vectors(static: StaticEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text())
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    ours = static.embed_documents(reference["texts"])
    cosines = (ours * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.9999


def test_shapes_dtype_and_unit_rows(static: StaticEmbedder) -> None:
    vectors = static.embed_documents(["first text", "second, longer text about gardening", "third"])
    assert vectors.shape == (3, 256)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = static.embed_query("a query")
    assert query.shape == (256,)
    assert query.dtype == np.float32


def test_empty_list_gives_empty_matrix(static: StaticEmbedder) -> None:
    vectors = static.embed_documents([])
    assert vectors.shape == (0, 256)
    assert vectors.dtype == np.float32


@pytest.mark.parametrize("text", ["", "   \n\t", "🙂🙂🙂"], ids=["empty", "blank", "only-unknown-tokens"])
def test_text_without_known_tokens_is_a_zero_row(static: StaticEmbedder, text: str) -> None:
    vectors = static.embed_documents(["some words", text])
    assert not vectors[1].any()
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)


def test_deterministic_across_instances(static: StaticEmbedder) -> None:
    texts = ["Caroline went to the LGBTQ support group yesterday.", "Melanie paints sunsets."]
    again = StaticEmbedder().embed_documents(texts)
    assert np.array_equal(static.embed_documents(texts), again)


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        pytest.param(
            "I love hiking in the mountains",
            "We went on a long mountain hike",
            "The tax form is due in April",
            id="hiking",
        ),
        pytest.param(
            "My favourite food is spicy Thai curry",
            "I really enjoy eating Thai dishes",
            "The server crashed with a segmentation fault",
            id="food",
        ),
        pytest.param(
            "She adopted a puppy from the shelter",
            "They got a new dog last week",
            "Interest rates rose again",
            id="pets",
        ),
    ],
)
def test_similar_texts_are_closer_than_unrelated(
    static: StaticEmbedder, anchor: str, similar: str, unrelated: str
) -> None:
    a, s, u = static.embed_documents([anchor, similar, unrelated])
    assert float(a @ s) > float(a @ u) + 0.1


def test_batches_equal_single_calls() -> None:
    texts = [f"text number {i} about {topic}" for i, topic in enumerate(["tea", "dogs", "rain", "music", "code"])]
    small_batches = StaticEmbedder(batch_size=2)
    batched = small_batches.embed_documents(texts)
    singles = np.stack([small_batches.embed_query(text) for text in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-6)
    np.testing.assert_allclose(StaticEmbedder().embed_documents(texts), batched, atol=1e-6)


def test_long_text_is_truncated_like_model2vec(static: StaticEmbedder) -> None:
    long_text = "alpha beta gamma delta " * 2000
    vector = static.embed_query(long_text)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    # model2vec keeps the first max_length * median_token_length characters, then 512 tokens.
    prefix = static.embed_query(long_text[: 512 * 6])
    np.testing.assert_allclose(vector, prefix, atol=1e-6)


def test_concurrent_callers_share_one_lazy_load() -> None:
    fresh = StaticEmbedder()
    texts = [f"thread {i} talks about topic {i % 3}" for i in range(40)]
    expected = StaticEmbedder().embed_documents(texts)
    results: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        results[worker] = fresh.embed_documents(texts)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8
    for vectors in results.values():
        np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_loads_and_embeds_with_network_blocked(tmp_path: Path) -> None:
    """A fresh process where any socket use raises: loading and embedding still work."""
    script = textwrap.dedent(
        """
        import socket

        class NoNetwork(socket.socket):
            def __init__(self, *args, **kwargs):
                raise OSError("network access attempted")

        socket.socket = NoNetwork
        socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(OSError("network access attempted"))
        from memstrata.embedders import resolve_embedder

        embedder = resolve_embedder("static")
        vectors = embedder.embed_documents(["offline works", "no hub needed"])
        print(embedder.name, vectors.shape)
        """
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "static-m2v-minilm-256 (2, 256)"


@pytest.mark.parametrize("bad", ["one string", ["ok", 3]], ids=["bare-str", "non-str-item"])
def test_rejects_invalid_input(static: StaticEmbedder, bad: object) -> None:
    with pytest.raises(InvalidInput):
        static.embed_documents(bad)  # type: ignore[arg-type]


def test_missing_model_folder_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="config.json"):
        StaticEmbedder(tmp_path / "nowhere")


def test_weights_of_the_wrong_shape_are_refused_on_load(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(DEFAULT_MODEL_DIR / name, model / name)
    np.save(model / "embeddings.npy", np.zeros((10, 256), dtype=np.float16))
    embedder = StaticEmbedder(model)  # config only: weights load lazily
    assert embedder.dimensions == 256
    with pytest.raises(ConfigurationError, match="shape"):
        embedder.embed_query("anything")
