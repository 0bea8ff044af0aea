"""A switch from one thing to another retires the statement about the old one (pure, no I/O).

"I switched to almond milk" replaces "I drink oat milk in my coffee"; "switched from Spotify to Apple
Music" replaces "I use Spotify for music"; "replaced my Kindle with a Kobo" replaces "I read on a
Kindle". What the switch replaces is either named ("from X", "replaced X", "instead of X") or, when
only the new thing is named, the statement about another thing of the same kind: the new thing's
head noun ("almond *milk*") is in the old statement, which does not already say the new thing.

Values are the sentences as said, normalized by resolution (lower case, no punctuation).
"""

from __future__ import annotations

import re

_THING = r"[\w@.+'-]+(?: [\w@.+'-]+){0,5}"
_SWITCH = re.compile(
    rf"\b(?:switched|switching|changed|swapped|upgraded|downgraded|converted|moved over|gone over)"
    rf"(?: over| back)?(?: from (?P<old>{_THING}))? to (?P<new>{_THING})(?= |$)"
    rf"|\b(?:replaced|traded(?: in)?|swapped(?: out)?) (?P<old2>{_THING}) (?:with|for) (?P<new2>{_THING})(?= |$)"
    rf"|\b(?:use|using|drink|drinking|eat|eating|play|playing|take|taking|run|running|drive|driving) (?P<new3>{_THING})"
    rf" instead of (?P<old3>{_THING})(?= |$)",
)
_PHRASE_END = re.compile(
    r" (?:last|this|next|in|on|at|for|since|yesterday|today|tonight|recently|and|but|because|so|now|after|when"
    r"|as|which|way|a|an|the|ago|full|for good|anymore|again|too|instead)\b.*$"
)
_LEADING = re.compile(r"^(?:(?:my|our|a|an|the|some|to|using) )+")
_LEAST_HEAD_LETTERS = 3
_VAGUE_MODIFIERS = frozenset(
    "new different another other better bigger smaller cheaper nicer older newer second third same whole".split()
)
"""Modifiers that do not name a kind: "a new team" is not another kind of the user's soccer team."""


def _phrase(raw: str | None) -> str:
    """The thing a switch names, without a following time or clause ("neovim last month" -> "neovim")."""
    if not raw:
        return ""
    return _LEADING.sub("", _PHRASE_END.sub("", f"{raw} ").strip()).strip()


def _names(text: str, phrase: str) -> bool:
    return bool(phrase) and f" {phrase} " in f" {text} "


def switch_retires(new: str | None, old: str | None) -> bool:
    """Does the switch said in `new` (a normalized sentence) replace what `old` (another) states?"""
    if not new or not old:
        return False
    match = _SWITCH.search(new)
    if match is None:
        return False
    before = _phrase(match["old"] or match["old2"] or match["old3"])
    after = _phrase(match["new"] or match["new2"] or match["new3"])
    if not after or _names(old, after) or _SWITCH.search(old):
        return False  # the old statement already says the new thing, or is itself a switch
    if before:
        return len(before) >= _LEAST_HEAD_LETTERS and _names(old, before)
    *modifiers, head = after.split()
    kind_named = any(word not in _VAGUE_MODIFIERS for word in modifiers)  # "almond milk", not "a new team"
    return kind_named and len(head) >= _LEAST_HEAD_LETTERS and head.isalpha() and _names(old, head)


__all__ = ["switch_retires"]
