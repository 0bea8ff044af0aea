"""Counting tokens offline, with a real tokenizer shipped in the package.

The default counter uses the WordPiece tokenizer of the shipped static embedding model
(`embedders/models/m2v-minilm-256/tokenizer.json`, bert-base-uncased vocabulary) through the
`tokenizers` library: no download, loaded on first use (never at import), shared by threads.
Counts exclude special tokens, and joining texts with whitespace adds no tokens, so counts of parts
add up exactly (`HFTokenCounter.additive`). Chat models use other vocabularies (BPE); budgets are a close
proxy, not their bill.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from tokenizers import Tokenizer

from ..errors import ConfigurationError

_CACHEABLE_CHARS = 2000
DEFAULT_TOKENIZER = (
    Path(__file__).resolve().parent.parent / "embedders" / "models" / "m2v-minilm-256" / "tokenizer.json"
)


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str, /) -> int: ...

    def count_many(self, texts: Sequence[str], /) -> list[int]: ...


class HFTokenCounter:
    """Counts tokens with a Hugging Face `tokenizer.json` (truncation and padding disabled)."""

    def __init__(self, path: str | Path = DEFAULT_TOKENIZER, *, cache_size: int = 20_000) -> None:
        self.path = Path(path)
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self._additive: bool | None = None

    def __repr__(self) -> str:
        return f"HFTokenCounter({str(self.path)!r})"

    def _load(self) -> Tokenizer:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    try:
                        tokenizer = Tokenizer.from_file(str(self.path))
                    except Exception as exc:  # the Rust side raises plain Exception
                        raise ConfigurationError(f"cannot load tokenizer {self.path}: {exc}") from exc
                    tokenizer.no_truncation()
                    tokenizer.no_padding()
                    self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def additive(self) -> bool:
        """Whether the count of texts joined with whitespace is the sum of their counts. True for a BERT
        WordPiece tokenizer (the shipped one): its normalizer maps each character on its own (cleaning,
        accents, case, CJK spacing), its pre-tokenizer splits at every whitespace and isolates punctuation,
        and WordPiece splits each word alone, so no token spans a whitespace and whitespace is no token.
        Packing then adds counts up instead of counting each rendered text again (`core.budget.pack`)."""
        if self._additive is None:
            config = json.loads(self._load().to_str())
            self._additive = (
                (config.get("normalizer") or {}).get("type") == "BertNormalizer"
                and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
                and (config.get("model") or {}).get("type") == "WordPiece"
            )
        return self._additive

    def count(self, text: str, /) -> int:
        return self.count_many([text])[0] if text else 0

    def count_many(self, texts: Sequence[str], /) -> list[int]:
        """Counts of many texts; short texts seen recently (memory lines, headers) come from a cache."""
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            encodings = self._load().encode_batch(missing, add_special_tokens=False)
            fresh = {t: len(e.ids) for t, e in zip(missing, encodings, strict=True)}
            known |= fresh
            with self._lock:
                for text, count in fresh.items():
                    if len(text) <= _CACHEABLE_CHARS:
                        self._cache[text] = count
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [known[t] for t in texts]


_default: HFTokenCounter | None = None
_default_lock = threading.Lock()


def default_counter() -> HFTokenCounter:
    """The process-wide counter over the shipped tokenizer."""
    global _default
    with _default_lock:
        if _default is None:
            _default = HFTokenCounter()
        return _default


def count_tokens(text: str) -> int:
    return default_counter().count(text)


__all__ = ["DEFAULT_TOKENIZER", "HFTokenCounter", "TokenCounter", "count_tokens", "default_counter"]
