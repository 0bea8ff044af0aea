"""Reading stated facts and retractions out of free text (pure, no I/O).

`first_person` turns a third-person memory ("Alice works at Acme Corp", "The user's manager is
Bob") into what the user would have said ("I work at Acme Corp", "My manager is Bob"), so that the
rule extractor can read a slot out of a memory stored verbatim through `add()`.

`retracted_phrases` finds what a message says no longer holds: "I no longer work at Acme",
"I don't drink coffee anymore", "I used to live in Lisbon", "I quit my job at Acme", "we moved
from Madrid to Porto". Each phrase is normalized text that resolution matches against slot values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_IRREGULAR = {"is": "am", "has": "have", "does": "do", "was": "was", "goes": "go"}
_ES_ENDINGS = ("shes", "ches", "xes", "sses", "zes", "oes")
_CLAUSE_END = re.compile(r"[,.;:!?()]|\s(?:but|and|so|because|since|though|although|now|then)\s", re.IGNORECASE)

_RETRACTIONS = (
    # "no longer X", "not X anymore" and "used to X": the clause after the cue names what stopped.
    re.compile(r"\bno\s+longer\s+(?P<rest>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(r"\bused\s+to\s+(?P<rest>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(
        r"\b(?:quit|left|leaving|sold|stopped|gave\s+up(?:\s+on)?|done\s+with|over|broke\s+up\s+with"
        r"|moved\s+(?:away\s+)?(?:out\s+)?(?:of|from)|switched\s+(?:away\s+)?from|retired\s+from"
        r"|not\s+(?:working|living)\s+(?:at|in|for))\s+(?P<rest>[^,.;:!?]+)",
        re.IGNORECASE,
    ),
)
_GONE = re.compile(
    r"\b(?P<rest>[A-Z][\w.-]+(?:\s+[A-Z][\w.-]+)?)\s+(?:retired|left|quit|passed\s+away|moved\s+away|is\s+gone)\b"
)
"""A named person or organization that is gone: "Bob retired so my new manager is Karen"."""
_NOT_ANYMORE = re.compile(
    r"(?:\bnot|n't|\bnever)\s+(?P<rest>[^,.;:!?]*?)\s+(?:any\s*more|these\s+days|nowadays)\b", re.IGNORECASE
)
_PRONOUNS = frozenset({"i", "we", "he", "she", "they", "it", "you", "my", "our"})
_LEADING = re.compile(r"^(?:(?:my|the|a|an|job|jobs|at|in|for|with|from|of|to|on)\s+)+", re.IGNORECASE)
_TRAILING_TO = re.compile(r"\s+(?:to|for|into)\s+.*$", re.IGNORECASE)
_TRAILING_TIME = re.compile(
    r"\s+(?:(?:last|this|next|every)\s+\w+|yesterday|today|tonight|recently|already|anymore|any more|again"
    r"|a\s+(?:while|few\s+\w+)\s+ago|\w+\s+(?:days|weeks|months|years)\s+ago"
    r"|(?:on|in|since|in\s+early|in\s+late)\s+(?:\d{4}|[A-Z][a-z]+day|january|february|march|april|may|june|july"
    r"|august|september|october|november|december))\b.*$",
    re.IGNORECASE,
)


def _verb_base(verb: str) -> str:
    lower = verb.casefold()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return verb[:-3] + "y"
    if lower.endswith(_ES_ENDINGS):
        return verb[:-2]
    if lower.endswith("s") and not lower.endswith("ss"):
        return verb[:-1]
    return verb


def first_person(text: str, names: Iterable[str] = ()) -> str | None:
    """`text` as the user would say it, when it starts with "The user", "User" or one of `names`;
    else None. Only the subject and its first verb change: "Alice loves coffee" -> "I love coffee"."""
    alternatives = ["the user", "user", *(re.escape(n) for n in names if n.strip())]
    match = re.match(
        rf"^\s*(?:{'|'.join(alternatives)})(?P<poss>'s|’s)?\s+(?P<verb>[\w']+)(?P<rest>.*)$",
        text,
        re.IGNORECASE | re.DOTALL,
    )
    if match is None:
        return None
    verb, rest = match["verb"], match["rest"]
    if match["poss"]:
        return f"My {verb}{rest}"
    if verb.casefold() in ("doesn't", "doesn’t"):
        return f"I don't{rest}"
    return f"I {_verb_base(verb)}{rest}"


def _clause(rest: str) -> str:
    """The words of `rest` up to the end of its clause, lower-cased, without leading articles."""
    head = _CLAUSE_END.split(f" {rest} ", maxsplit=1)[0]
    head = _TRAILING_TIME.sub("", _TRAILING_TO.sub("", head.strip()))
    return " ".join(_LEADING.sub("", head.casefold()).split())


def retracted_phrases(text: str) -> tuple[str, ...]:
    """Normalized phrases naming what `text` says no longer holds (empty when it retracts nothing)."""
    found = [_clause(m["rest"]) for pattern in _RETRACTIONS for m in pattern.finditer(text)]
    found += [_clause(m["rest"]) for m in _NOT_ANYMORE.finditer(text)]
    found += [_clause(m["rest"]) for m in _GONE.finditer(text) if m["rest"].casefold() not in _PRONOUNS]
    return tuple(dict.fromkeys(p for p in found if p))


__all__ = ["first_person", "retracted_phrases"]
