"""A learned store-worthiness score for one clause of a user message (issue 16, sixth pass).

The rules read a clause by its linguistic category; chat written by others says most store-worthy
things in shapes no category names ("Losing my job was hard", "Dance gives me an escape"). This module
scores a clause with a small L2 logistic regression over two kinds of feature:

- the clause's static sentence embedding (the bundled model2vec model, `embedders.static`), which
  carries what the clause is about;
- a few cheap facts the rules already compute: the speaker as subject (`disclosure_start`), the reason
  `disclosure.refusal` gives as a one-hot, a question, the length, a number, capitalised names, a
  first-person or second-person word anywhere;
- the shape of a disclosure (session 8): how many specific words the clause holds
  (`disclosure.specific_words`), a past-tense verb, "I have"/"we've", a liking verb, a time word. Each
  lowered the grouped cross-validation log-loss (0.2417 -> 0.2347 together, every fold lower).

The weights (`models/store_worthiness.npz`) come from `python -m memstrata.bench.train_disclosure`,
which fits them on hand-labelled turns and chooses the threshold by cross-validation grouped by
conversation. They are loaded on first use. `features` and `probabilities` are pure given the weights.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigurationError
from .disclosure import disclosure_start, refusal, specific_words, without_evaluation
from .skip import is_question

MODEL_PATH = Path(__file__).parent / "models" / "store_worthiness.npz"
REFUSALS = ("request", "attitude", "modal", "assistant", "context", "conversation", "slot", "thin")
HARD_REFUSALS = frozenset({"request", "assistant", "conversation", "context"})
"""Reasons no score overrides: a request to the assistant, the assistant itself, this very talk, and words
that lean on what was said before ("I made this apple pie", "they gave me a medal"): a memory must be
understood without the conversation. A slot's vocabulary is left to the score: a statement is
many-valued and never retires a slot's value, and cross-validation kept 6 more items with it (4 of them
said with slot words) at no loss of precision."""
CHEAP_FEATURES = (
    "speaker_subject",
    *(f"refusal_{reason}" for reason in REFUSALS),
    "question",
    "log_words",
    "number",
    "log_names",
    "first_person",
    "second_person",
    "log_specific_words",
    "past_tense",
    "speaker_has",
    "liking",
    "time_word",
)

_WORD = re.compile(r"[\w'-]+")
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<=[\w,] )(?-i:[A-Z])[a-z]+\b(?<!\bI)")
_SPEAKER_WORD = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|our|us)\b", re.IGNORECASE)
_YOU = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.IGNORECASE)
_PAST_TENSE = re.compile(
    r"\b(?:[a-z]+ed|was|were|had|did|went|ran|got|took|made|met|came|left|began|won|lost|bought|sold|flew|drove"
    r"|wrote|gave|quit|became|broke|found|spent|set|hit|read|saw|swam|rode|sang|built|caught|taught|brought"
    r"|held|kept|paid|sent)\b",
    re.IGNORECASE,
)
_SPEAKER_HAS = re.compile(r"\b(?:i|we) (?:have|had)\b|\b(?:i|we)'ve\b", re.IGNORECASE)
_LIKING = re.compile(
    r"\b(?:love|loves|loved|like|likes|enjoy|enjoys|enjoyed|passion|favorite|favourite|hobby|into)\b", re.IGNORECASE
)
_TIME_WORD = re.compile(
    r"\b(?:yesterday|today|tomorrow|last|next|ago|since|recently|week|weekend|month|year|years)\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Reading:
    """What the rules say of a clause: where the speaker's subject starts and why it would be refused."""

    start: int | None
    reason: str | None


def read(clause: str) -> Reading:
    """The speaker's subject in `clause` (masked text) and `disclosure.refusal`'s reason for it."""
    start = disclosure_start(clause)
    if start is None:
        return Reading(None, None)
    return Reading(start, refusal(without_evaluation(clause[start:])))


def cheap_features(
    clause: str, reading: Reading, *, question: bool | None = None, second_person: bool | None = None
) -> list[float]:
    """The `CHEAP_FEATURES` of one clause, in that order (pure). `question` and `second_person` are
    worked out from the clause unless the caller already knows them (the learned path scores no
    question and no clause naming "you")."""
    count = len(_WORD.findall(clause))
    return [
        float(reading.start is not None),
        *(float(reading.reason == reason) for reason in REFUSALS),
        float(is_question(clause) if question is None else question),
        math.log1p(count),
        float(bool(_NUMBER.search(clause))),
        math.log1p(len(_NAME.findall(clause))),
        float(bool(_SPEAKER_WORD.search(clause))),
        float(bool(_YOU.search(clause)) if second_person is None else second_person),
        math.log1p(len(specific_words(clause))),
        float(bool(_PAST_TENSE.search(clause))),
        float(bool(_SPEAKER_HAS.search(clause))),
        float(bool(_LIKING.search(clause))),
        float(bool(_TIME_WORD.search(clause))),
    ]


def features(clauses: Sequence[str], readings: Sequence[Reading], embeddings: np.ndarray) -> np.ndarray:
    """One row per clause: its embedding, then its cheap features."""
    cheap = np.array([cheap_features(c, r) for c, r in zip(clauses, readings, strict=True)], dtype=np.float64)
    return np.hstack([np.asarray(embeddings, dtype=np.float64), cheap.reshape(len(clauses), len(CHEAP_FEATURES))])


@dataclass(frozen=True)
class Weights:
    """A fitted model: rows are standardised with `mean`/`scale`, then `p = sigmoid(rows @ coef + bias)`.

    `threshold` is the probability from which a clause no rule stored is kept.
    """

    coef: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    threshold: float

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        return sigmoid(((rows - self.mean) / self.scale) @ self.coef + self.bias)

    def save(self, path: str | Path) -> None:
        np.savez(
            path,
            coef=self.coef.astype(np.float32),
            bias=np.float64(self.bias),
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            threshold=np.float64(self.threshold),
        )

    @classmethod
    def load(cls, path: str | Path) -> Weights:
        try:
            with np.load(path, allow_pickle=False) as raw:
                return cls(
                    coef=raw["coef"].astype(np.float64),
                    bias=float(raw["bias"]),
                    mean=raw["mean"].astype(np.float64),
                    scale=raw["scale"].astype(np.float64),
                    threshold=float(raw["threshold"]),
                )
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigurationError(f"store-worthiness weights {path} cannot be loaded: {exc}") from exc


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0)))


class StoreWorthiness:
    """The shipped model, loaded (with the static embedder) on the first clause scored."""

    def __init__(self, path: str | Path = MODEL_PATH, *, weights: Weights | None = None) -> None:
        """The weights at `path`, or `weights` as given (the trainer's cross-validation folds)."""
        self._path = Path(path)
        self._given = weights
        self._loaded: _Scorer | None = None
        self._lock = threading.Lock()

    def _scorer(self) -> _Scorer:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = _Scorer(self._given or Weights.load(self._path))
                loaded = self._loaded
        return loaded

    @property
    def weights(self) -> Weights:
        return self._scorer().weights

    def probability(self, clause: str, original: str, reading: Reading, *, reachable: bool = False) -> float:
        """P(store-worthy) of one clause (`clause` masked, `original` as said); the same number as
        `Weights.probabilities` of its `features` row, computed without building the row.

        `reachable=True` says the clause is neither a question nor names "you" (the learned path has
        ruled both out), so those two features are not worked out again."""
        known = False if reachable else None
        return self._scorer().probability(
            original, cheap_features(clause, reading, question=known, second_person=known)
        )


class _Scorer:
    """Weights with the standardisation folded in (`coef / scale`), split into the embedding's part
    (a float32 dot product) and the cheap features' part (a few Python floats): one clause costs one
    embedding and no array building. The embedder is the process-wide static one the default
    `Memory` embeds with (`embedders.registry.default_embedder`): its weights load once per process,
    for both."""

    def __init__(self, weights: Weights) -> None:
        from ..embedders.registry import default_embedder  # the embedder's weights load only when needed

        folded = weights.coef / weights.scale
        width = len(folded) - len(CHEAP_FEATURES)
        self.weights = weights
        self.embedding = folded[:width].astype(np.float32)
        self.cheap = [float(w) for w in folded[width:]]
        self.bias = float(weights.bias - (weights.mean / weights.scale) @ weights.coef)
        self.embedder = default_embedder()

    def probability(self, original: str, cheap: list[float]) -> float:
        # embed_query: the same row as embed_documents([original])[0], without the batch bookkeeping
        vector = self.embedder.embed_query(original)
        logit = float(vector @ self.embedding) + self.bias
        logit += sum(w * x for w, x in zip(self.cheap, cheap, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))


SHIPPED = StoreWorthiness()

__all__ = [
    "CHEAP_FEATURES",
    "HARD_REFUSALS",
    "MODEL_PATH",
    "SHIPPED",
    "Reading",
    "StoreWorthiness",
    "Weights",
    "cheap_features",
    "features",
    "read",
    "sigmoid",
]
