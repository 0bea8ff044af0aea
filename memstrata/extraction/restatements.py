"""Sentences of a user message that may restate a stored value, for `learn` to test (pure, no I/O).

The extractor keeps what it can read as worth storing; an update is often said in a sentence it does not
keep ("the recital was rescheduled for May 9", "school starts at 8:30 now", "the conference moved to
Vienna"). `restatements` gives, for each sentence of a user message that carries an update cue
(`changes.update_cue`) and that no extracted candidate already holds, the statement it would be stored
as: the sentence in the third person with its dates made absolute, as a `statement` (or an `event` when
dated). `learn` stores one only when resolution finds a current memory it replaces (`changes`), so a
sentence that retires nothing is never stored by this path.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Candidate, Message
from .changes import update_cue
from .resolution import normalize_value
from .rules.clause import Clause
from .rules.self_statements import stated
from .segment import sentences

_LEAST_WORDS = 3
_MOST_WORDS = 60


def cue_sentences(message: Message) -> list[str]:
    """The sentences of a user message that carry an update cue, in order (empty for other roles)."""
    if message.role != "user":
        return []
    found = []
    for text in sentences(message.content):
        if _LEAST_WORDS <= len(text.split()) <= _MOST_WORDS and not text.rstrip().endswith("?") and update_cue(text):
            found.append(text)
    return found


def restatement(text: str, message: Message, *, name: str | None = None) -> Candidate | None:
    """The statement a cue sentence of `message` would be stored as (None when it reads as nothing)."""
    found = stated(Clause(text, text, message.at, name), 0, checked=False, trim=lambda said: said)
    if not found:
        return None
    return found[0]


def held(text: str, candidates: Sequence[Candidate]) -> bool:
    """Does an extracted candidate already hold the whole sentence `text`: does its value say every word of
    it (a trailing "now" aside)? "The user's number changed." does not hold "my number changed, it's
    555-9876 now", though it was read from that sentence."""
    said = normalize_value(text) or ""
    for candidate in candidates:
        value = normalize_value(candidate.value) or ""
        if said and value and f" {said} " in f" {value} ":
            return True
    return False


__all__ = ["cue_sentences", "held", "restatement"]
