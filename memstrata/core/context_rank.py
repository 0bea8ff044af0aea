"""Which search hits become context, and in what order (pure functions, no I/O).

A search ranks memories for a query; `context()` then decides which of them are worth prompt space:

* Filler turns (greetings, thanks, acknowledgements: "Thanks, that's all for now.", "ok", "Got it.") are
  never context: they say nothing an agent could use, yet a hybrid search finds them through the common
  words they share with any question ("now", "for", "what").
* For a question that asks for advice or a plan ("plan a dinner", "what should I cook tonight?"), what
  is known about the user (learned facts and preferences) outranks what was only said in passing (raw
  conversation turns): the hit score of a long-term memory is multiplied by `1 + ADVICE_PRIOR`, and such
  a memory counts as relevant from a lower similarity (`ADVICE_SIMILARITY_SHARE` of the usual floor),
  since advice draws on facts that share no word with the question (a peanut allergy for a dinner).
* An advice question stays selective at any budget: past its `MIN_KEPT` best hits, a hit whose context
  score is below `RELATIVE_FLOOR` times the best hit's is left out, so a large `max_tokens` does not pack
  every memory the user has. The floor is this high only for advice questions because only they lower the
  relevance bar (any long-term memory half as similar counts): a factual question ("when did Caroline go to the
  support group?") keeps every hit that shares a keyword with it or is similar enough, since its evidence
  often ranks far below the best hit (a date said in another turn of the same conversation); its floor
  (`FACTUAL_FLOOR`) only drops hits that scored next to nothing.
* An advice question also brings the user's standing facts — learned preferences and facts about the user
  (a diet, an allergy, a favourite restaurant) — even when they share nothing with the question: at most
  `STANDING_SLOTS` of them, by importance then recency (`standing_facts`). Other questions never get them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .text import words

ADVICE_PRIOR = 0.5
"""Long-term memories (facts, preferences, events...) of an advice question score `1 + ADVICE_PRIOR` times more."""
ADVICE_SIMILARITY_SHARE = 0.5
"""For an advice question, a long-term memory counts as relevant from this share of the similarity floor."""
RELATIVE_FLOOR = 0.3
"""For an advice question, a hit scoring below this share of the best hit's score is not context..."""
FACTUAL_FLOOR = 0.02
"""For any other question, a hit below this share of the best hit's score (a keyword match on one common
word, a vector side that barely found it) is not context either, past the `MIN_KEPT` best."""
MIN_KEPT = 5
"""...unless it is one of the `MIN_KEPT` best relevant hits: the floor never leaves fewer."""
STANDING_SLOTS = 5
"""At most this many standing facts about the user join the context of an advice question."""

FILLER_WORDS = frozenset(
    """
    a all also alright am and any anything appreciate appreciated are awesome bye cheers cool d did do done
    else enough everything excellent fantastic fine for from good goodbye got great ha haha happy hello help
    helpful hey hi hmm i i'm is it it's just k kind lot ll lovely m me more morning afternoon evening much
    my nice no noted now of oh ok okay perfect please pleasure re really right s see so sound sounds super
    sure t thank thanks that that's the there thx to too ty understood very ve wonderful wow yeah yep yes
    you your yup welcome will would what's up day night later bit again all's well that'd be
    """.split()
)
"""Words a filler turn is made of: social talk that carries no fact, preference, request or plan."""

_ADVICE = re.compile(
    r"\b(?:plan(?:s|ning)?|suggest(?:ion|ions)?|recommend(?:ation|ations)?|advi[cs]e|ideas?|tips?|"
    r"should (?:i|we|he|she|they)|what (?:can|could) (?:i|we)|help me (?:choose|pick|decide|find|plan)|"
    r"(?:choose|pick|decide|organi[sz]e|prepare|arrange|book) (?:a|an|the|some|my|our|what|where)|"
    r"what to|where to|which (?:one|restaurant|gift|book|place)|cook|recipe|menu|gift|present for)\b",
    re.IGNORECASE,
)


def is_filler(text: str) -> bool:
    """Whether a text is only social talk: every word it has is a `FILLER_WORDS` word (so a turn with no
    word at all, e.g. "👍", is filler too). "Thanks, the dentist is on Friday" is not filler."""
    return all(word in FILLER_WORDS for word in words(text))


def asks_for_advice(query: str) -> bool:
    """Whether the query asks for a suggestion, recommendation or plan ("plan a dinner for Maya", "what
    should I cook tonight?", "any restaurant ideas?")."""
    return bool(_ADVICE.search(query))


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the selection knows about one hit: its search `score`, whether it shares a keyword with the query,
    its cosine `similarity` (None when the vector side did not find it), whether it is a raw conversation turn
    (`episode`) and its `text`."""

    score: float
    keyword: bool
    similarity: float | None
    episode: bool
    text: str


def context_score(candidate: Candidate, *, advice: bool) -> float:
    """The score a hit is ranked by in the context: its search score, with the advice prior on long-term memories."""
    prior = 1.0 + ADVICE_PRIOR if advice and not candidate.episode else 1.0
    return max(candidate.score, 0.0) * prior


def is_relevant(candidate: Candidate, min_similarity: float, *, advice: bool) -> bool:
    """A hit is relevant when it shares a keyword with the query or is similar enough to it (a lower bar for
    the long-term memories of an advice question); filler is never relevant."""
    if is_filler(candidate.text):
        return False
    floor = min_similarity * ADVICE_SIMILARITY_SHARE if advice and not candidate.episode else min_similarity
    return candidate.keyword or (candidate.similarity is not None and candidate.similarity >= floor)


def floor_share(*, advice: bool) -> float:
    """The share of the best hit's context score a hit needs beyond the `MIN_KEPT` best: `RELATIVE_FLOOR`
    for an advice question, the much lower `FACTUAL_FLOOR` for any other."""
    return RELATIVE_FLOOR if advice else FACTUAL_FLOOR


def above_floor(scores: Sequence[float], share: float, *, keep: int = MIN_KEPT) -> int:
    """How many of `scores` (sorted best first) are context: the first `keep`, then every one at least
    `share` times the best. `share` 0 keeps them all."""
    if not scores:
        return 0
    bar = share * max(scores[0], 0.0)
    count = min(keep, len(scores))
    while count < len(scores) and scores[count] >= bar:
        count += 1
    return count


def select(candidates: Sequence[Candidate], min_similarity: float, *, advice: bool) -> list[int]:
    """Indexes of the candidates that are context, best first: the relevant ones (`is_relevant`) by
    `context_score`, cut by `above_floor` at `floor_share`. Ties keep the given order."""
    scored = [
        (context_score(c, advice=advice), i)
        for i, c in enumerate(candidates)
        if is_relevant(c, min_similarity, advice=advice)
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    kept = above_floor([score for score, _ in scored], floor_share(advice=advice))
    return [i for _, i in scored[:kept]]


@dataclass(frozen=True, slots=True)
class Standing:
    """What `standing_facts` knows about one learned memory: whether it is a preference, whether it is
    about the user (metadata subject "user"), its `importance`, its creation time (`created`, any
    increasing number) and its text."""

    preference: bool
    about_user: bool
    importance: float
    created: float
    text: str


def standing_facts(memories: Sequence[Standing], *, slots: int = STANDING_SLOTS) -> list[int]:
    """Indexes of the standing facts among `memories`, best first: preferences and facts about the user
    (never filler), by importance, then newest first, then given order; at most `slots`."""
    eligible = [i for i, m in enumerate(memories) if (m.preference or m.about_user) and not is_filler(m.text)]
    eligible.sort(key=lambda i: (-memories[i].importance, -memories[i].created, i))
    return eligible[: max(slots, 0)]


__all__ = [
    "ADVICE_PRIOR",
    "ADVICE_SIMILARITY_SHARE",
    "FACTUAL_FLOOR",
    "FILLER_WORDS",
    "MIN_KEPT",
    "RELATIVE_FLOOR",
    "STANDING_SLOTS",
    "Candidate",
    "Standing",
    "above_floor",
    "asks_for_advice",
    "context_score",
    "floor_share",
    "is_filler",
    "is_relevant",
    "select",
    "standing_facts",
]
