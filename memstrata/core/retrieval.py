"""Final ranking of hybrid search candidates (pure functions, no I/O).

The store returns two candidate lists per query, best first: keyword hits (FTS5 `bm25()` /
`ts_rank`, higher is better) and vector hits (cosine). This module turns them into one ranking.
It never touches the store; the caller passes the lists and the little per-candidate metadata
the ranking uses (the speaker of each candidate).

The recommended recipe (`HybridParams()` defaults; first measured on the LoCoMo dev split: evidence
recall@10 0.789 against 0.613 for plain BM25, the numbers and every losing variant are in the
retrieval study report):

1. Index each turn with three full-text columns (`index_columns`): its own text, the text of the
   previous `CONTEXT_TURNS` turns of the same session, and its date written out ("8 May 2023").
   Rank with `bm25(fts, *KEYWORD_COLUMN_WEIGHTS)`. This document expansion is the largest single
   gain: a reply ("Yes, we won a trophy!") is found through the question it answers.
2. Take the top `depth` hits of each list, min-max normalize each list, and sum
   `vector_weight * vector + (1 - vector_weight) * keyword` (absent from a list = 0).
3. Multiply the score of candidates spoken by a person the query names by `1 + speaker_boost`.
4. Multiply the score of conversation turns of the role the query asks about (the user's own turns for a
   question in the first person) by `1 + role_boost`, and of candidates dated in a period the query
   names ("last week", "in May 2023"; `core.temporal`) by up to `1 + time_boost` (a candidate matches by
   its own time or by a period its text names), and for questions that ask when something happened, of
   candidates whose text states a time by `1 + when_boost`.
5. With the speaker boost on, the vector list is searched with the query minus the speakers' names it
   names (`without_names`, done by the caller, `layers.semantic`).

The vector weight went from 0.2 to 0.3 with the role boost (issue 17): LoCoMo dev recall@10 unchanged
(0.781 -> 0.782), LongMemEval dev turn recall@10 0.867 -> 0.956 (BENCHMARKS.md, "LongMemEval"). Step 5
came with issue 17's third pass (LoCoMo dev recall@10 0.785 -> 0.791, LongMemEval unchanged: its turns have
roles, not named speakers; BENCHMARKS.md, "LoCoMo recall, third pass").
Session diversity (`session_penalty`), session evidence (`session_weight`) and the preference for newer
memories (`latest_boost`) are available but off: none gained on both benchmarks.

Reciprocal-rank fusion and neighbour smoothing are provided for comparison and for callers that
want them; on LoCoMo both lost to the recipe above (RRF k=60 by 0.10 recall@10).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

from ..errors import InvalidInput
from .diversity import asked_role, asks_across_sessions, asks_for_latest, boost_role, diversify, prefer_latest
from .scoring import min_max, rrf_fusion
from .session_evidence import share_session_scores
from .temporal import TimeWindow, asks_when, boost_matches, boost_timed, window_matches
from .text import words

Hits = Sequence[tuple[str, float]]
"""`(id, score)` pairs, best first, as a store search returns them."""

Normalization = Literal["minmax", "max", "zscore", "rank"]
NORMALIZATIONS: tuple[Normalization, ...] = ("minmax", "max", "zscore", "rank")

CONTEXT_TURNS = 2
"""How many previous turns of the same session go into a turn's `context` column."""

KEYWORD_COLUMNS = ("content", "context", "date")
KEYWORD_COLUMN_WEIGHTS = (1.0, 0.5, 1.0)
"""`bm25()` weights for `KEYWORD_COLUMNS`, in that order."""


@dataclass(frozen=True, slots=True)
class HybridParams:
    """Settings of `hybrid_rank`. The defaults are the measured recipe."""

    depth: int = 50
    """Candidates used from each list (the store should be asked for at least this many)."""
    vector_weight: float = 0.3
    """Weight of the vector list; the keyword list gets `1 - vector_weight`."""
    normalization: Normalization = "minmax"
    fusion: Literal["weighted", "rrf"] = "weighted"
    rrf_k: int = 60
    """RRF constant; with `fusion="rrf"` the lists are weighted `1 - vector_weight` and `vector_weight`."""
    speaker_boost: float = 1.0
    """Named-speaker candidates are multiplied by `1 + speaker_boost`; 0 turns it off."""
    neighbour_weight: float = 0.0
    """If > 0 and neighbours are given, a turn gains this share of its neighbours' scores."""
    time_boost: float = 1.0
    """Candidates dated in a period the query names (`core.temporal`) are multiplied by up to `1 + time_boost`."""
    session_penalty: float = 0.0
    """For queries that gather across conversations (`asks_across_sessions`), each further candidate of an
    already-placed session keeps `1 - session_penalty` of its score (`core.diversity.diversify`)."""
    latest_boost: float = 0.0
    """For queries about the present (`asks_for_latest`), the newest candidate gets up to `1 + latest_boost`."""
    role_boost: float = 2.0
    """Candidates of the conversation role the query asks about (`asked_role`) get `1 + role_boost`."""
    when_boost: float = 2.0
    """For queries that ask when something happened (`core.temporal.asks_when`), candidates whose text
    states a time (`CandidateFacts.timed`) get `1 + when_boost`."""
    session_weight: float = 0.0
    """Each candidate gains this share of the best score among the candidates of its conversation session
    (`core.session_evidence`); 0 turns it off. Off by default: 0.2 gained 0.006 recall@10 on LoCoMo but cost
    0.02 turn recall@10 on LongMemEval, whose one-topic sessions then fill the top ten."""
    plain_vector_query: bool = True
    """With the speaker boost on, the vector side searches with the query minus the speakers' names it
    names (`without_names`): the boost already ranks by them, and in the embedding of a short question a
    name pulls towards every turn of that speaker instead of towards the turns about the question's topic."""

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise InvalidInput(f"depth must be >= 1, got {self.depth}")
        if not 0.0 <= self.vector_weight <= 1.0:
            raise InvalidInput(f"vector_weight must be in [0, 1], got {self.vector_weight}")
        if self.normalization not in NORMALIZATIONS:
            raise InvalidInput(f"unknown normalization {self.normalization!r}; use one of {NORMALIZATIONS}")
        if self.fusion not in ("weighted", "rrf"):
            raise InvalidInput(f"unknown fusion {self.fusion!r}; use 'weighted' or 'rrf'")
        if self.rrf_k <= 0:
            raise InvalidInput(f"rrf_k must be > 0, got {self.rrf_k}")
        boosts = (
            self.speaker_boost,
            self.neighbour_weight,
            self.time_boost,
            self.latest_boost,
            self.role_boost,
            self.when_boost,
            self.session_weight,
        )
        if min(boosts) < 0:
            raise InvalidInput(
                "speaker_boost, neighbour_weight, time_boost, latest_boost, role_boost, when_boost, session_weight "
                "must be >= 0"
            )
        if not 0.0 <= self.session_penalty <= 1.0:
            raise InvalidInput(f"session_penalty must be in [0, 1], got {self.session_penalty}")


@dataclass(frozen=True, slots=True)
class RankedHit:
    """One ranked candidate and why it ranked there.

    `components` holds the normalized `keyword` and `vector` scores (0 when absent from that list)
    and the multiplier `speaker_boost` that was applied (1.0 when none).
    """

    id: str
    score: float
    components: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CandidateFacts:
    """What the ranking may know about candidates besides their scores (all optional).

    `speaker_of`: the speaker (or a linked name) of each candidate; `time_of`: its event time;
    `session_of`: the conversation session it came from; `role_of`: "user" or "assistant" for
    conversation turns; `windows`: the periods the query names (`core.temporal.read_windows`, resolved
    against the time the search happens at); `periods_of`: the periods a candidate's own text names,
    resolved against its time; `timed`: whether its text states a time (`core.temporal.states_time`).
    """

    speaker_of: Mapping[str, str | None] = field(default_factory=dict)
    time_of: Mapping[str, datetime | None] = field(default_factory=dict)
    session_of: Mapping[str, str | None] = field(default_factory=dict)
    role_of: Mapping[str, str | None] = field(default_factory=dict)
    windows: Sequence[TimeWindow] = ()
    periods_of: Mapping[str, Sequence[TimeWindow]] = field(default_factory=dict)
    timed: Mapping[str, bool] = field(default_factory=dict)
    about_user: Mapping[str, bool] = field(default_factory=dict)
    """For a query that names the memory owner (`names_the_user`): whether each candidate is about the user
    (`is_about_user`); those get `1 + role_boost`. Empty for every other query."""
    superseded: Mapping[str, bool] = field(default_factory=dict)
    """Whether each candidate was no longer current at the search's time (only seen with `include_superseded`)."""


# -- index text ---------------------------------------------------------------


def context_text(previous: Sequence[str], turns: int = CONTEXT_TURNS) -> str:
    """The `context` column of a turn: the last `turns` earlier turns of its session, oldest first, one
    per line (a line break separates words as a space does, and lets the keyword index reuse the terms
    it computed for each turn, `core.keyword_index`).

    `previous` holds the texts before this turn in the same session (only those; a new session
    starts with an empty context).
    """
    if turns < 0:
        raise InvalidInput(f"turns must be >= 0, got {turns}")
    return "\n".join(previous[max(0, len(previous) - turns) :]) if turns else ""


def date_text(when: date | datetime) -> str:
    """The `date` column: the day written out as words, e.g. `8 May 2023`.

    Queries such as "in June 2022" or "on 6 November 2023" then match with plain full-text search.
    English month names are used whatever the locale.
    """
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}"


def index_columns(text: str, previous: Sequence[str], when: date | datetime) -> tuple[str, str, str]:
    """The values of `KEYWORD_COLUMNS` for one turn: `(content, context, date)`."""
    return text, context_text(previous), date_text(when)


_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


# -- normalization and fusion -------------------------------------------------


def normalize(hits: Hits, method: Normalization = "minmax") -> dict[str, float]:
    """Map one list's scores onto a common scale.

    * `minmax`: `(s - min) / (max - min)`, a constant list maps to 1.0;
    * `max`: `s / max` (for positive scores such as BM25), non-positive max maps to 0.0;
    * `zscore`: `(s - mean) / stdev` (can be negative);
    * `rank`: `1 - r / n` for the hit at 0-based rank `r` of `n`, ignoring the scores.
    """
    if not hits:
        return {}
    if method == "minmax":
        return min_max(hits)
    if method == "max":
        top = max(s for _, s in hits)
        return {i: s / top if top > 0 else 0.0 for i, s in hits}
    if method == "zscore":
        values = [s for _, s in hits]
        mean = sum(values) / len(values)
        stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {i: (s - mean) / stdev if stdev > 1e-12 else 0.0 for i, s in hits}
    if method == "rank":
        n = len(hits)
        return {i: 1.0 - r / n for r, (i, _) in enumerate(hits)}
    raise InvalidInput(f"unknown normalization {method!r}; use one of {NORMALIZATIONS}")


def weighted_sum(
    lists: Mapping[str, Hits], weights: Mapping[str, float], *, normalization: Normalization = "minmax"
) -> dict[str, float]:
    """`sum(weights[name] * normalized score in lists[name])` per id; absent from a list counts 0.

    Ids appear in the order first seen (list order of `lists`, then rank), which `rank_scores` keeps
    for ties.
    """
    missing = set(lists) - set(weights)
    if missing:
        raise InvalidInput(f"no weight given for {sorted(missing)}")
    normed = {name: normalize(hits, normalization) for name, hits in lists.items()}
    ids = dict.fromkeys(i for scores in normed.values() for i in scores)
    return {i: sum(weights[name] * scores.get(i, 0.0) for name, scores in normed.items()) for i in ids}


def reciprocal_rank_fusion(
    lists: Sequence[Hits], *, k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """RRF: per id, the sum over lists of `weight / (k + rank)`, rank starting at 1."""
    if weights is not None and len(weights) != len(lists):
        raise InvalidInput(f"{len(weights)} weights for {len(lists)} lists")
    return rrf_fusion(*lists, k=k, weights=weights)


def smooth_neighbours(
    scores: Mapping[str, float], neighbours: Mapping[str, Sequence[str]], weight: float
) -> dict[str, float]:
    """Each id gains `weight` times the score of every scored neighbour (e.g. the adjacent turns
    of the same session). Neighbours that were not candidates enter with what they gain."""
    out = dict(scores)
    for memory_id, score in scores.items():
        for other in neighbours.get(memory_id, ()):
            if other != memory_id:
                out[other] = out.get(other, 0.0) + weight * score
    return out


# -- speakers -----------------------------------------------------------------


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers whose name occurs in `query` as whole words (case-insensitive; "Maria's" counts)."""
    query_words = [w.split("'")[0] for w in words(query)]
    found = set()
    for speaker in set(speakers):
        name = [w.split("'")[0] for w in words(speaker)]
        if name and any(query_words[i : i + len(name)] == name for i in range(len(query_words))):
            found.add(speaker)
    return found


def without_names(query: str, names: Iterable[str]) -> str:
    """`query` without the whole-word occurrences of `names` (case-insensitive; "Maria's" goes with "Maria"),
    spaces collapsed. Returns the query unchanged when nothing else would be left."""
    pattern = "|".join(re.escape(n.strip()) for n in sorted(names, key=len, reverse=True) if n.strip())
    if not pattern:
        return query
    plain = " ".join(
        re.sub(rf"(?<![\w'])(?:{pattern})(?:['\u2019]s)?(?![\w'])", " ", query, flags=re.IGNORECASE).split()
    )
    return plain if any(ch.isalnum() for ch in plain) else query


def boost_speakers(
    scores: Mapping[str, float], speaker_of: Mapping[str, str | None], named: set[str], boost: float
) -> dict[str, float]:
    """Multiply the score of every candidate spoken by a `named` speaker by `1 + boost`.

    Scores must be non-negative for this to favour those candidates (`hybrid_rank` ensures it).
    """
    if not named or boost == 0:
        return dict(scores)
    return {i: s * (1.0 + boost) if speaker_of.get(i) in named else s for i, s in scores.items()}


# -- the memory owner's own names ---------------------------------------------

SELF_TERMS = "the user"
"""How learned memories name their owner ("The user lives in Porto.")."""
_SELF_SUBJECT = re.compile(r"^\W*(?:the user|user)\b(?!['\u2019]s)", re.IGNORECASE)


def _name_spans(query: str, name: str) -> list[tuple[int, int]]:
    """Where `name` occurs in `query` as the name of the user: whole words, possessive included, and not
    followed by a capitalized word that is not part of `name` ("Maya Chen" is someone else than "Maya")."""
    spans = []
    pattern = rf"(?<![\w'])({re.escape(name)})(?:['\u2019]s)?(?![\w'])"
    for found in re.finditer(pattern, query, flags=re.IGNORECASE):
        rest = query[found.end() :]
        after = re.match(r"\s+([A-Z][\w'-]*)", rest)
        if after and after.group(1).casefold() not in {w.casefold() for w in name.split()} | {"i"}:
            continue  # another person who shares the first name ("Maya Chen" when the user is "Maya")
        spans.append((found.start(), found.end()))
    return spans


def user_names_in(query: str, names: Iterable[str]) -> list[str]:
    """The memory owner's known `names` that `query` names as the user (longest first; "Maya Rossi" before
    "Maya"). Only the owner's names count: a conversation between other named people is not affected."""
    found = []
    taken: list[tuple[int, int]] = []
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        spans = [s for s in _name_spans(query, name) if not any(a <= s[0] < b for a, b in taken)]
        if spans:
            found.append(name)
            taken += spans
    return found


def names_the_user(query: str, names: Iterable[str]) -> bool:
    return bool(user_names_in(query, names))


def as_about_user(query: str, names: Iterable[str]) -> str:
    """`query` with the owner's names replaced by "the user" ("where does Maya live?" -> "where does the user
    live?", "Maya's mother" -> "the user's mother"), the way learned memories name their owner: the keyword
    and the vector side then match "The user lives in Porto." Unchanged when the query names no known name."""
    out = query
    for name in user_names_in(query, names):
        spans = _name_spans(out, name)
        for start, end in reversed(spans):
            possessive = out[start:end].casefold().endswith(("'s", "\u2019s"))
            out = out[:start] + SELF_TERMS + ("'s" if possessive else "") + out[end:]
    return out


def named_as_user(text: str, names: Iterable[str]) -> str:
    """A memory's `text` with the owner's names read as "the user", the way every learned memory names its
    owner ("Maya lives in Porto." -> "The user lives in Porto."; "Maya Chen", another person, is kept):
    `as_about_user`, with the capital a sentence starts with."""
    out = as_about_user(text, names)
    if out != text and out.startswith(SELF_TERMS):
        out = SELF_TERMS.capitalize() + out[len(SELF_TERMS) :]
    return out


def is_about_user(text: str, role: str | None, names: Iterable[str]) -> bool:
    """Whether a memory's subject is its owner: the user's own conversation turn, or a text that starts with
    "The user" or one of the owner's names, not in the possessive ("Maya lives in Porto", not "Maya's mother
    lives in Montreal", which is about the mother)."""
    if role == "user":
        return True
    if _SELF_SUBJECT.match(text):
        return True
    head = text.lstrip(" \t\n\"'-*")
    for name in names:
        name = name.strip()
        if name and head[: len(name)].casefold() == name.casefold():
            rest = head[len(name) :]
            if not rest or (not rest[0].isalnum() and not rest.startswith(("'s", "\u2019s"))):
                return True
    return False


SUPERSEDED_FACTOR = 0.8
"""A memory that was no longer current at the search's time keeps this share of its score, so that the current
memory ranks above a superseded one of similar relevance (with `include_superseded`)."""


def penalize_superseded(scores: Mapping[str, float], superseded: Mapping[str, bool]) -> dict[str, float]:
    """Multiply the score of every superseded candidate by `SUPERSEDED_FACTOR`."""
    return {i: s * SUPERSEDED_FACTOR if superseded.get(i) else s for i, s in scores.items()}


# -- the whole ranking --------------------------------------------------------


def rank_scores(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """`(id, score)` by descending score; ties keep the mapping's order (deterministic)."""
    return sorted(scores.items(), key=lambda item: -item[1])


def hybrid_rank(
    keyword: Hits,
    vector: Hits,
    *,
    query: str,
    speaker_of: Mapping[str, str | None] | None = None,
    neighbours: Mapping[str, Sequence[str]] | None = None,
    params: HybridParams | None = None,
    limit: int | None = None,
    facts: CandidateFacts | None = None,
) -> list[RankedHit]:
    """Fuse keyword and vector candidates into one ranking (see the module docstring for the recipe).

    `speaker_of` maps candidate ids to their speaker (metadata); the speakers the query names are
    found among them, so no list of known people is needed. `neighbours` (ids of the adjacent turns
    of each candidate) is only used when `params.neighbour_weight > 0`. `facts` adds event times and
    sessions: candidates dated in a period the query names rise (`time_boost`), sessions alternate
    (`session_penalty`) and queries about the present prefer newer candidates (`latest_boost`).
    """
    p = params or HybridParams()
    known = facts or CandidateFacts()
    kw, vec = list(keyword[: p.depth]), list(vector[: p.depth])
    kw_norm, vec_norm = normalize(kw, p.normalization), normalize(vec, p.normalization)
    fused = _fuse(kw, vec, p, neighbours)
    speakers = speaker_of if speaker_of is not None else known.speaker_of
    named = named_speakers(query, (s for s in speakers.values() if s)) if p.speaker_boost else set()
    boosted = boost_speakers(fused, speakers, named, p.speaker_boost)
    windows = known.windows if p.time_boost else ()
    matches = window_matches(boosted, known.time_of, windows, known.periods_of)
    boosted = boost_matches(boosted, matches, p.time_boost)
    if p.when_boost and asks_when(query):
        boosted = boost_timed(boosted, known.timed, p.when_boost)
    boosted = boost_role(boosted, known.role_of, asked_role(query) if p.role_boost else None, p.role_boost)
    boosted = boost_speakers(boosted, {i: "user" for i, yes in known.about_user.items() if yes}, {"user"}, p.role_boost)
    if p.latest_boost and asks_for_latest(query):
        boosted = prefer_latest(boosted, known.time_of, p.latest_boost)
    boosted = share_session_scores(boosted, known.session_of, p.session_weight)
    boosted = penalize_superseded(boosted, known.superseded)
    penalty = p.session_penalty if p.session_penalty and asks_across_sessions(query) else 0.0
    ranked = diversify(rank_scores(boosted), known.session_of, penalty)
    if limit is not None:
        ranked = ranked[:limit]
    return [
        RankedHit(
            id=i,
            score=score,
            components={
                "keyword": kw_norm.get(i, 0.0),
                "vector": vec_norm.get(i, 0.0),
                "speaker_boost": 1.0 + p.speaker_boost if speakers.get(i) in named else 1.0,
                "time_match": matches.get(i, 0.0),
            },
        )
        for i, score in ranked
    ]


def _fuse(kw: Hits, vec: Hits, p: HybridParams, neighbours: Mapping[str, Sequence[str]] | None) -> dict[str, float]:
    """The fused, non-negative score of every candidate (before boosts)."""
    if p.fusion == "rrf":
        fused = reciprocal_rank_fusion([kw, vec], k=p.rrf_k, weights=[1.0 - p.vector_weight, p.vector_weight])
    else:
        weights = {"keyword": 1.0 - p.vector_weight, "vector": p.vector_weight}
        fused = weighted_sum({"keyword": kw, "vector": vec}, weights, normalization=p.normalization)
    if p.neighbour_weight > 0 and neighbours:
        fused = smooth_neighbours(fused, neighbours, p.neighbour_weight)
    if fused and min(fused.values()) < 0:  # zscore: shift so that a multiplicative boost favours
        low = min(fused.values())
        fused = {i: s - low for i, s in fused.items()}
    return fused
