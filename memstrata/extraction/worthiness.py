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

The weights (`models/store_worthiness.npz`) come from `python -m memstrata_bench.train_disclosure`,
which fits them on hand-labelled turns and chooses the threshold by cross-validation grouped by
conversation. They are loaded on first use. `features` and `probabilities` are pure given the weights.

Weights only mean something for the feature code they were fitted on. The trainer stores with them the
feature rows of `PROBES` (a fixed set of clauses touching every feature) and their `fingerprint`; a
change to what the feature code computes (not to how it is written) changes those rows, which
`stale_features` reports, the test suite fails on, and the loader warns about (see `_Scorer`).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigurationError
from .disclosure import disclosure_start, refusal, specific_words, without_evaluation
from .segment import mask_quotes
from .skip import is_question

logger = logging.getLogger(__name__)

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

RETRAIN_COMMAND = (
    "python -m memstrata_bench.train_disclosure --locomo ../shared/data/locomo/locomo-dev.json "
    "--longmemeval ../shared/data/longmemeval/longmemeval_s_dev100.json.gz"
)
"""Refits the shipped weights and writes them with the current feature code's probe rows and fingerprint
(run from the repository root with the benchmark harness installed: `pip install -e benchmarks`)."""
PROBES = (
    "I ran the Berlin marathon in 3 hours with Sam",
    "Last week I hiked the Teton Crest trail with my dog",
    "I've got two kids and a cat named Pixel",
    "We have lived in Lisbon since 2019",
    "I love experimenting in the kitchen",
    "My favourite hobby is restoring old bikes",
    "I think it looks great",
    "I might try pottery next month",
    "Can you recommend a good hotel in Rome?",
    "I need help with my resume",
    "I want you to help me plan a trip",
    "I got a new job since we last talked",
    "My name is Jon and I live in Paris",
    "I am a teacher",
    "Thanks so much, that helps",
    "I made this apple pie for them",
    "I was just saying that earlier",
    "You are really good at this",
    "What do you think about my plan?",
    "Losing my job at the engineering company was hard",
    "Dance gives me an escape from it all",
    "My sister Maria works as a nurse in Toronto",
    "I quit smoking five years ago",
    'She told me "I never liked that place" yesterday',
    "I need to renew my passport before June",
    "ok",
)
"""Clauses whose feature rows stand for the feature code: each cheap feature is set by at least one, and
the embedding is read on all (quoted words masked, as the extractor reads a clause)."""
FEATURE_TOLERANCE = 1e-4
"""How far a probe row may move and still be the same feature code: float32 sums differ in their last
bits between machines; any change in behaviour moves a cheap feature by far more (a flag by 1, a count
by log(2)-log(1))."""

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


def probe_rows(embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """The feature rows of every clause of `PROBES`, embedded with `embed` (pure given the embedder)."""
    masked = [mask_quotes(probe) for probe in PROBES]
    return features(masked, [read(clause) for clause in masked], embed(list(PROBES)))


def fingerprint(rows: np.ndarray) -> str:
    """A short name for probe rows: the SHA-256 of their shape and values rounded to 4 decimals (rows
    within `FEATURE_TOLERANCE` of each other almost always share it; `stale_features` decides)."""
    rounded = np.round(np.asarray(rows, dtype=np.float64), 4) + 0.0  # + 0.0 turns -0.0 into 0.0
    digest = hashlib.sha256(repr(rounded.shape).encode() + rounded.tobytes())
    return digest.hexdigest()[:16]


def stale_features(stored: np.ndarray | None, current: np.ndarray) -> str | None:
    """Why weights fitted on `stored` probe rows do not fit the feature code that computes `current`,
    or None when they do (pure). Names the first probe clause and features that moved."""
    if stored is None:
        return "the weights carry no probe rows (trained before fingerprints)"
    if stored.shape != current.shape:
        return f"the probe rows changed shape from {stored.shape} to {current.shape}"
    moved = np.abs(stored - current) > FEATURE_TOLERANCE
    if not moved.any():
        return None
    names = [f"embedding[{i}]" for i in range(current.shape[1] - len(CHEAP_FEATURES))] + list(CHEAP_FEATURES)
    row = int(np.argmax(moved.any(axis=1)))
    changed = [names[i] for i in np.flatnonzero(moved[row])]
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return (
        f"{int(moved.any(axis=1).sum())} of {len(current)} probe clauses have other features, first "
        f"{PROBES[row]!r} ({shown}); fingerprint {fingerprint(stored)} -> {fingerprint(current)}"
    )


@dataclass(frozen=True)
class Weights:
    """A fitted model: rows are standardised with `mean`/`scale`, then `p = sigmoid(rows @ coef + bias)`.

    `threshold` is the probability from which a clause no rule stored is kept. `probes` are the feature
    rows of `PROBES` when the weights were fitted (`probe_rows`), None for weights that never had them.
    """

    coef: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    threshold: float
    probes: np.ndarray | None = None

    @property
    def fingerprint(self) -> str | None:
        return None if self.probes is None else fingerprint(self.probes)

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        return sigmoid(((rows - self.mean) / self.scale) @ self.coef + self.bias)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {
            "coef": self.coef.astype(np.float32),
            "bias": np.asarray(self.bias, dtype=np.float64),
            "mean": self.mean.astype(np.float32),
            "scale": self.scale.astype(np.float32),
            "threshold": np.asarray(self.threshold, dtype=np.float64),
        }
        if self.probes is not None:
            arrays["probes"] = self.probes.astype(np.float32)
        np.savez(path, **arrays)  # type: ignore[arg-type]  # the stub types any ** as allow_pickle

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
                    probes=raw["probes"].astype(np.float64) if "probes" in raw.files else None,
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
    for both.

    Loading checks the weights' probe rows against the feature code's and logs a warning when they
    differ (`stale_features`): the scores are then off by an unknown amount, but each memory kept is
    still a clause of the user's and the rules' memories are untouched, so extraction goes on rather
    than failing every message. Weights without probe rows (trained before fingerprints) are not
    checked. The test suite fails on the shipped weights going stale."""

    def __init__(self, weights: Weights) -> None:
        from ..embedders.registry import default_embedder  # the embedder's weights load only when needed

        folded = weights.coef / weights.scale
        width = len(folded) - len(CHEAP_FEATURES)
        self.weights = weights
        self.embedding = folded[:width].astype(np.float32)
        self.cheap = [float(w) for w in folded[width:]]
        self.bias = float(weights.bias - (weights.mean / weights.scale) @ weights.coef)
        self.embedder = default_embedder()
        if weights.probes is not None:
            why = stale_features(weights.probes, probe_rows(self.embedder.embed_documents))
            if why is not None:
                logger.warning(
                    "store-worthiness weights do not fit the feature code: %s; retrain: %s", why, RETRAIN_COMMAND
                )

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
    "FEATURE_TOLERANCE",
    "MODEL_PATH",
    "PROBES",
    "RETRAIN_COMMAND",
    "SHIPPED",
    "Reading",
    "StoreWorthiness",
    "Weights",
    "cheap_features",
    "features",
    "fingerprint",
    "probe_rows",
    "read",
    "sigmoid",
    "stale_features",
]
