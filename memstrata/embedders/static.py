"""The default, offline embedder: a static (model2vec) model shipped inside the package.

A static model is one vector per vocabulary token. A text's embedding is the mean of its tokens'
vectors, L2-normalized, exactly as model2vec's `StaticModel.encode` computes it. The shipped model
(`models/m2v-minilm-256`) is a model2vec distillation of all-MiniLM-L6-v2 (Apache-2.0; see its NOTICE),
made by `scripts/distill_static_model.py`. At run time only numpy and tokenizers are needed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from ..errors import ConfigurationError, InvalidInput
from .base import Vectors, normalize_rows
from .wordpiece_cache import WordPieceCache

DEFAULT_MODEL_DIR = Path(__file__).parent / "models" / "m2v-minilm-256"
DEFAULT_BATCH_SIZE = 1024


@dataclass(frozen=True)
class StaticModelConfig:
    """The few facts read from a model folder's `config.json` (no weights)."""

    name: str
    dimensions: int
    max_length: int | None
    median_token_length: int
    unk_token: str | None

    @classmethod
    def read(cls, model_dir: Path) -> StaticModelConfig:
        path = model_dir / "config.json"
        try:
            raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                name=str(raw["name"]),
                dimensions=int(raw["dimensions"]),
                max_length=None if raw.get("max_length") is None else int(raw["max_length"]),
                median_token_length=int(raw.get("median_token_length", 1)),
                unk_token=raw.get("unk_token"),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"static embedding model config {path} is unreadable: {exc}") from exc


class _LoadedModel:
    """Tokenizer + token vectors (and `words`, a cache of words' pieces), safe to share between threads."""

    def __init__(self, model_dir: Path, config: StaticModelConfig) -> None:
        try:
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            table = np.load(model_dir / "embeddings.npy", allow_pickle=False)
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise ConfigurationError(f"static embedding model in {model_dir} cannot be loaded: {exc}") from exc
        if table.ndim != 2 or table.shape != (tokenizer.get_vocab_size(), config.dimensions):
            raise ConfigurationError(
                f"static embedding model in {model_dir}: embeddings.npy has shape {table.shape}, expected "
                f"({tokenizer.get_vocab_size()}, {config.dimensions})"
            )
        # Pitfall: a BERT tokenizer.json may pad every text to a fixed length; pads would join the mean.
        tokenizer.no_padding()
        if config.max_length is None:
            tokenizer.no_truncation()
            self.max_chars: int | None = None
        else:
            tokenizer.enable_truncation(config.max_length)
            # model2vec cuts very long texts to max_length * median token length characters first.
            self.max_chars = config.max_length * config.median_token_length
        self.tokenizer = tokenizer
        # encode_batch_fast (tokenizers >= 0.21) skips offset tracking; same ids as encode_batch.
        self._encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        # Kept as stored (float16 for the shipped model: 15 MB, read in a few ms); the rows a text uses are
        # widened to float32 when gathered, exactly the floats a widened table would hold.
        self.table: np.ndarray = np.ascontiguousarray(table)
        self._wide: np.ndarray | None = None
        self.unk_id = None if config.unk_token is None else tokenizer.token_to_id(config.unk_token)
        self.words = WordPieceCache(tokenizer, self._encode_batch, config.max_length)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids, as `tokenizer_ids` gives them, read word by word where `words` can."""
        if self.max_chars is not None:
            texts = [text[: self.max_chars] for text in texts]
        return self.words.ids_many(texts)

    def tokenizer_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids from the tokenizer itself (one batch), cut as `token_ids` cuts them."""
        if self.max_chars is not None:
            texts = [text[: self.max_chars] for text in texts]
        encodings = self._encode_batch(texts, add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def sum_vector(self, text: str) -> np.ndarray:
        """`sum_vectors([text])[0]` without the batch bookkeeping, at a fraction of the cost for one text.
        `reduceat` as there, not `sum`: `sum` adds the rows pairwise, which rounds differently."""
        ids = self.words.ids(text if self.max_chars is None else text[: self.max_chars])
        if self.unk_id is not None:
            ids = [i for i in ids if i != self.unk_id]
        if not ids:
            return np.zeros(self.table.shape[1], dtype=np.float32)
        table = self.table if self._wide is None else self._wide
        return np.add.reduceat(table[ids].astype(np.float32, copy=False), [0], axis=0)[0]

    def sum_vectors(self, texts: list[str]) -> np.ndarray:
        """Per text, the sum of its known tokens' vectors (zeros for a text without any)."""
        wide = self.wide_table()
        if len(texts) == 1:  # the same sum, without the batch bookkeeping (a one-memory write)
            return self.sum_vector(texts[0])[None, :]
        ids = self.token_ids(texts)
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        owner = np.repeat(np.arange(len(ids)), lengths)
        if self.unk_id is not None:  # model2vec drops unknown tokens before pooling
            known = flat != self.unk_id
            flat, owner = flat[known], owner[known]
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        if flat.size:
            counts = np.bincount(owner, minlength=len(texts))
            rows = np.flatnonzero(counts)
            starts = np.concatenate(([0], np.cumsum(counts[rows])[:-1]))
            out[rows] = np.add.reduceat(wide[flat], starts, axis=0)
        return out

    def wide_table(self) -> np.ndarray:
        """The table as float32 (the same floats as widening the gathered rows), made by the first
        `embed_documents`, not at load (a process that only embeds queries keeps the 15 MB table): gathering
        a batch's rows from it takes a fifth of the time of gathering and widening float16 rows (LoCoMo, 256
        turns: 3 ms against 15 ms), for 30 MB more. (Two threads may both make it; either copy holds the
        same floats.)"""
        wide = self._wide
        if wide is None:
            wide = self._wide = self.table.astype(np.float32)
        return wide


class StaticEmbedder:
    """Mean-pooled static token embeddings; loads its weights once, on first use (or `load()`).

    The mean and the sum of a text's token vectors differ only by a positive factor, so the rows are
    computed as sums and then L2-normalized. Texts without any known token embed as zero rows.
    One instance may be used from many threads at once.
    """

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise InvalidInput("batch_size must be >= 1")
        self._model_dir = Path(model_dir) if model_dir is not None else DEFAULT_MODEL_DIR
        self._config = StaticModelConfig.read(self._model_dir)
        self._batch_size = batch_size
        self._model: _LoadedModel | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._config.name

    @property
    def dimensions(self) -> int:
        return self._config.dimensions

    @property
    def model_dir(self) -> Path:
        return self._model_dir

    def load(self) -> None:
        """Load the tokenizer and weights now instead of on the first embed call."""
        self._loaded()

    def _loaded(self) -> _LoadedModel:
        model = self._model
        if model is None:
            with self._lock:
                if self._model is None:
                    self._model = _LoadedModel(self._model_dir, self._config)
                model = self._model
        return model

    def embed_documents(self, texts: Sequence[str], /) -> Vectors:
        batch = as_text_list(texts)
        if not batch:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._loaded()
        parts = [
            model.sum_vectors(batch[start : start + self._batch_size])
            for start in range(0, len(batch), self._batch_size)
        ]
        return normalize_rows(parts[0] if len(parts) == 1 else np.concatenate(parts))

    def embed_query(self, text: str, /) -> Vectors:
        """The same row as `embed_documents([text])[0]`, computed without the batch bookkeeping."""
        if not isinstance(text, str):
            raise InvalidInput(f"embed_query takes a str, not {type(text).__name__}")
        return unit_row(self._loaded().sum_vector(text))

    def __repr__(self) -> str:
        return f"StaticEmbedder(name={self.name!r}, dimensions={self.dimensions}, model_dir='{self._model_dir}')"


def unit_row(row: np.ndarray) -> np.ndarray:
    """`normalize_rows(row)[0]` for one float32 row, the same floats (the squares added by the same
    `add.reduce`, a float32 square root and division) without the two-dimensional bookkeeping."""
    norm = np.sqrt(np.add.reduce(row * row))
    return row / norm if norm != 0 else row.copy()


def as_text_list(texts: Sequence[str]) -> list[str]:
    """Validate an `embed_documents` argument: a sequence of str (a lone str is refused, not split)."""
    if isinstance(texts, str):
        raise InvalidInput("embed_documents takes a sequence of texts, not a single str")
    batch = list(texts)
    for text in batch:
        if not isinstance(text, str):
            raise InvalidInput(f"every text must be a str, got {type(text).__name__}")
    return batch
