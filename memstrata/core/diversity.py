"""Diversity across sessions, the latest memory, and whose words a question asks about (pure re-ranking).

A question that gathers facts from several conversations ("how many weddings did I attend this year?")
needs one hit from each of them more than five hits from the best one. `diversify` re-ranks greedily:
each candidate's score is multiplied by `(1 - penalty) ** n`, where n is the number of candidates of the
same group (session) already placed above it. Candidates without a group are never penalized.

A question about the current state of something ("what is my current job?", "how many bikes do I own
now?") is best answered by the latest memory about it; `prefer_latest` raises newer candidates a little
when the query asks for the present (`asks_for_latest`).

In a conversation between a user and an assistant, a question in the first person ("what did I buy?")
asks about what the user said, and one about the assistant's words ("what did you recommend?") about
the assistant's turns: `asked_role` says which role (the `role` metadata of conversation episodes) a
query is about, and `boost_role` raises that role's candidates.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

_LATEST = re.compile(
    r"\b(?:current(?:ly)?|now|nowadays|these days|at the moment|latest|most recent(?:ly)?|still|anymore|"
    r"so far|up to date|presently|today)\b",
    re.IGNORECASE,
)


_ASSISTANT = re.compile(
    r"\byou(?:'ve| had| have)? (?:said|told|mentioned|recommended|suggested|gave|provided|listed|shared|"
    r"explained|named|described|proposed|offered|wrote)\b|\byour (?:suggestion|recommendation|advice|answer|list)s?\b"
    r"|\bremind me what you\b",
    re.IGNORECASE,
)
_ACROSS = re.compile(
    r"\b(?:how many (?!days ago|weeks ago|months ago|years ago)|in total|total|altogether|combined|all (?:the|my)|"
    r"each|every|different|across)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
_OUR_EXCHANGE = re.compile(
    r"\b(?:our (?:previous|last|earlier|past|recent) (?:conversation|chat|discussion|talk|exchange)s?|"
    r"we (?:talked|spoke|chatted) about|we (?:discussed|covered)|you and i (?:talked|discussed))\b",
    re.IGNORECASE,
)
_REMIND_ME = re.compile(r"\bremind me\b(?P<asked>[^.?!;]*)", re.IGNORECASE)


def diversify(
    ranked: Sequence[tuple[str, float]], group_of: Mapping[str, str | None], penalty: float
) -> list[tuple[str, float]]:
    """Re-rank `(id, score)` pairs (non-negative scores, best first) so that groups alternate.

    Returns the pairs with their discounted scores, best first; `penalty=0` keeps the order.
    """
    if penalty <= 0 or not ranked:
        return list(ranked)
    keep = 1.0 - min(penalty, 1.0)
    placed: dict[str, int] = {}
    heap = [(-score, order, memory_id, 0) for order, (memory_id, score) in enumerate(ranked)]
    heapq.heapify(heap)
    out: list[tuple[str, float]] = []
    while heap:
        neg, order, memory_id, seen = heapq.heappop(heap)
        group = group_of.get(memory_id)
        count = placed.get(group, 0) if group is not None else 0
        if count != seen:  # its group gained members since this score was computed: re-queue it
            heapq.heappush(heap, (-(-neg * keep ** (count - seen)), order, memory_id, count))
            continue
        out.append((memory_id, -neg))
        if group is not None:
            placed[group] = count + 1
    return out


def asks_for_latest(query: str) -> bool:
    """Whether the query asks about the present state ("currently", "now", "most recent", ...)."""
    return bool(_LATEST.search(query))


def prefer_latest(
    scores: Mapping[str, float], time_of: Mapping[str, datetime | None], boost: float
) -> dict[str, float]:
    """Multiply each score by `1 + boost * r`, r in [0, 1] the candidate's time rank among the candidates
    (newest 1, oldest 0; candidates without a time get 0)."""
    dated = sorted({t for i in scores if (t := time_of.get(i)) is not None})
    if boost == 0 or len(dated) < 2:
        return dict(scores)
    position = {t: n / (len(dated) - 1) for n, t in enumerate(dated)}

    def newness(memory_id: str) -> float:
        when = time_of.get(memory_id)
        return position[when] if when is not None else 0.0

    return {i: s * (1.0 + boost * newness(i)) for i, s in scores.items()}


def asked_role(query: str) -> str | None:
    """ "assistant" when the query asks about the assistant's words, "user" when it is in the first person,
    else None.

    The assistant's words are asked for by naming them ("you recommended", "your list") or by asking, about
    an earlier exchange of ours ("our previous conversation", "we talked about"), to be reminded of something
    that is not about the speaker ("can you remind me of the brand that ...", not "... what my budget was"):
    what the user said of themselves is asked in the first person."""
    if _ASSISTANT.search(query) or _reminded_of_our_exchange(query):
        return "assistant"
    if _FIRST_PERSON.search(query):
        return "user"
    return None


def _reminded_of_our_exchange(query: str) -> bool:
    if not _OUR_EXCHANGE.search(query):
        return False
    reminder = _REMIND_ME.search(query)
    return reminder is not None and not _FIRST_PERSON.search(reminder.group("asked"))


def boost_role(
    scores: Mapping[str, float], role_of: Mapping[str, str | None], role: str | None, boost: float
) -> dict[str, float]:
    """Multiply the score of every candidate of `role` by `1 + boost` (unchanged when role is None)."""
    if role is None or boost == 0:
        return dict(scores)
    return {i: s * (1.0 + boost) if role_of.get(i) == role else s for i, s in scores.items()}


def asks_across_sessions(query: str) -> bool:
    """Whether the query gathers or counts things that are usually spread over several conversations
    ("how many weddings...", "the total cost of...", "all the books...")."""
    return bool(_ACROSS.search(query))
