"""The one check of a free-text answer that is stored as memory (a rolling summary, a compressed memory).

`usable_text` (raw output) and `check_free_text` (output already through `parse.clean_text`) are
pure. They remove what is addressed to the reader rather than part of the summary, then refuse
what is not a summary at all:

* removed: reasoning blocks and code fences (`parse.clean_text`); a leading preamble that introduces
  the answer ("Sure! Here is the updated summary:", "Summary:"); trailing chatter: closing offers
  and questions to the reader ("Let me know if you need changes.", "I hope this helps!", "Would you
  like me to shorten it?"), matched by the general shapes such sentences take, not by a list of
  whole sentences. A summary is written in the third person about its inputs, so a sentence at the
  end that talks to "you" about the answer itself is never part of it.
* refused (`LLMOutputError`): nothing left; an answer that opens by declining ("I can't help with
  that", "I'm sorry, but I am unable to…"); an answer with no content word; and an answer that
  does not look like a summary of its inputs: fewer than `MIN_SHARED` of its distinct content words
  occur in them. A summary restates its inputs, and what it must keep (names, numbers, places,
  dates) are words of those inputs, so even a free paraphrase shares far more than that; an answer
  that shares less is about something else (an answer to another prompt, an invented story).

The callers store nothing when the answer is refused: the rolling summary keeps its previous value
and consolidation keeps the originals current.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.text import content_terms
from ..errors import LLMOutputError
from .parse import clean_text, preview

MIN_SHARED = 0.2
"""The least share of an answer's distinct content words that must occur in its inputs."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})
_INTERJECTION = re.compile(
    r"^(?:sure(?: thing)?|certainly|of course|absolutely|okay|ok|alright|got it)[.!,]+\s*", re.IGNORECASE
)
_INTRODUCTION = re.compile(
    r"^(?:here(?:'s| is| are)|below is|the following is)\b[^\n:]{0,80}:\s*"
    r"|^[*#_\s]*(?:(?:updated|new|revised|rolling|compressed|final)\s+)?summary\b[*_\s]*:[*_\s]*",
    re.IGNORECASE,
)
_CLOSING = re.compile(
    r"\b(?:let me know|hope (?:this|that|it) (?:helps|is helpful|works)|feel free|happy to (?:help|assist|adjust)|"
    r"glad to (?:help|assist)|anything else|is there anything|(?:would|do) you (?:like|want|need)|shall i|"
    r"should i|can i (?:help|assist)|if you(?:'d| would)? (?:like|need|want|prefer)|if you have any|"
    r"i can (?:also )?(?:adjust|expand|shorten|revise|rewrite|help|provide|add|include))\b",
    re.IGNORECASE,
)
_TO_READER = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)
_PERSONAL = re.compile(r"\b(?:you|your|yours|i|me|my)\b|^(?:hope|feel free|please)\b", re.IGNORECASE)
"""First or second person, or an imperative to the reader ("Feel free to…")."""
_SEPARATOR = re.compile(r"^[-*_=~\s]{3,}$")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?…])[\"')\]]*\s+")
_DECLINES = re.compile(
    r"^(?:(?:i'm|i am) sorry|sorry|i apologi[sz]e|unfortunately|as an ai(?: language model)?)?[\s,.!]*(?:but\s+)?"
    r"(?:i|we)\s+(?:can't|cannot|can not|am unable to|am not able to|won't|will not|do not have|don't have|"
    r"must decline|do not feel comfortable|don't feel comfortable)\b"
    r"|^(?:i'm|i am) sorry\b|^as an ai\b",
    re.IGNORECASE,
)
_GENERIC = frozenset(
    content_terms(
        "user assistant conversation summary summarized discussed mentioned asked talked said says shared noted "
        "memories previous turns also update updated"
    )
)
"""Words any summary uses whatever it summarizes: they neither make an answer look like its inputs nor not."""


def is_chatter(sentence: str) -> bool:
    """A sentence addressed to the reader about the answer: a closing offer in the first or second
    person or as a question ("Let me know…", "I hope this helps", "Anything else?"), or any question
    to "you". A third-person sentence ("The user asked for anything else to read") is not."""
    text = sentence.strip().translate(_APOSTROPHES)
    question = text.endswith("?")
    if _CLOSING.search(text) and (question or _PERSONAL.search(text)):
        return True
    return question and bool(_TO_READER.search(text))


def strip_preamble(text: str) -> str:
    """`text` without leading interjections ("Sure!") and an introducing clause ("Here is the summary:")."""
    body = text.strip()
    while True:
        flat = body.translate(_APOSTROPHES)
        match = _INTERJECTION.match(flat) or _INTRODUCTION.match(flat)
        if match is None or match.end() >= len(body):
            return body
        body = body[match.end() :].lstrip()


def strip_chatter(text: str) -> str:
    """`text` without trailing separator lines and trailing sentences that are chatter."""
    lines = text.rstrip().splitlines()
    while lines:
        last = lines[-1].strip()
        if not last or _SEPARATOR.match(last):
            lines.pop()
            continue
        pieces = _SENTENCE_BREAK.split(last)
        head, tail = (last[: len(last) - len(pieces[-1])].rstrip(), pieces[-1]) if len(pieces) > 1 else ("", last)
        if not is_chatter(tail):
            break
        if head:
            lines[-1] = head
        else:
            lines.pop()
    return "\n".join(lines).strip()


def _refusal(body: str, sources: Sequence[str]) -> str | None:
    """Why `body` is not a usable summary of `sources`, or None when it is one."""
    if _DECLINES.match(body.translate(_APOSTROPHES)):
        return "it declines instead of answering"
    terms = set(content_terms(body)) - _GENERIC
    if not terms:
        return "it has no content words"
    if not sources:
        return None
    known = set(content_terms("\n".join(sources)))
    shared = terms & known
    if len(shared) < MIN_SHARED * len(terms):
        return (
            f"it does not look like a summary of its inputs (only {len(shared)} of its {len(terms)} content "
            f"words occur in them)"
        )
    return None


def check_free_text(text: str, *, sources: Sequence[str] = (), what: str = "summary") -> str:
    """`text` (already through `clean_text`) without preamble and chatter; `LLMOutputError` when it
    is not usable (see the module doc). With no `sources` the overlap rule is not applied."""
    body = strip_chatter(strip_preamble(text))
    reason = "nothing is left after the preamble and closing remarks" if not body else _refusal(body, sources)
    if reason is not None:
        raise LLMOutputError(f"the LLM's {what} is not usable: {reason} (output was {preview(text)})")
    return body


def usable_text(text: str, *, sources: Sequence[str] = (), what: str = "summary") -> str:
    """The stored form of a raw free-text answer summarizing `sources`: reasoning, fences, preamble
    and chatter removed. Raises `LLMOutputError` naming why, when nothing usable is left."""
    return check_free_text(clean_text(text), sources=sources, what=what)


__all__ = ["MIN_SHARED", "check_free_text", "is_chatter", "strip_chatter", "strip_preamble", "usable_text"]
