"""Request rules: an explicit "remember that X" / "note: X" / "for the record, X".

X's own structured candidates (identity, relation, preference) when the statement rules find some,
with a raised confidence; otherwise a `request` note holding X.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...models import MemoryKind
from ..base import Candidate
from ..dates import guess_tense
from ..lexicon import UPPER
from ..render import third_person
from .clause import Clause, Rule, candidate, clean_value, first_date

_REQUEST = re.compile(
    r"^(?:please )?(?:note to self|remember(?! to\b| when\b| what\b| how\b| who\b| where\b| the time\b)(?: that)?"
    r"|(?:make a |take a |take )?note(?: down)?(?: that)?|keep in mind(?: that)?|bear in mind(?: that)?"
    r"|(?:don't|do not) forget(?! to\b)(?: that)?|for (?:future|your) reference|for the record"
    r"|just so you know"
    r"|fyi|(?:please )?save this|store this|write (?:this|that) down|jot (?:this|that) down)"
    r"\s*[:,\-]?\s+(?P<v>\S.*)$",
    re.I,
)
_STATEMENT_START = re.compile(
    rf"(?:i|i'm|i've|i'd|i'll|my|we|we're|our|the|a|an|this|that|these|those|there|it|it's|his|her|their|he|"
    rf"she|they|everyone|everything|all|no|every|each|some)\b|(?-i:[{UPPER}])(?![\w.]*,)|\d",
    re.IGNORECASE,
)
_STRUCTURED = ("identity", "relation", "preference", "instruction", "entity")
_ONLY_A_REFERENCE = re.compile(
    r"^(?:that|this|it|these|those|them|all (?:of )?(?:that|this|those)|(?:that|this) one|what i (?:said|told you)"
    r"|everything|the above)(?: (?:please|for me|for later|too|as well|okay|ok))*[\s.!,]*$",
    re.I,
)


def request_rules(ctx: Clause, inner: Rule) -> list[Candidate] | None:
    """None when the clause is no request; else what `inner` finds in X (structured only) or a note."""
    match = _REQUEST.search(ctx.clause)
    if not match:
        return None
    start = match.start("v")
    to_self = match.group(0).casefold().startswith("note to self")
    if not (to_self or _STATEMENT_START.match(ctx.clause[start:])) or _ONLY_A_REFERENCE.match(ctx.clause[start:]):
        return []  # "Don't forget, believe in yourself": advice; "Remember that.": points at earlier words
    body_ctx = replace(ctx, clause=ctx.clause[start:], original=ctx.original[start:])
    structured = [c for c in inner(body_ctx) if c.category in _STRUCTURED]
    if structured:
        return [replace(c, confidence=max(c.confidence, 0.95), source_text=ctx.original) for c in structured]
    body = ctx.original[start:]
    return [
        candidate(
            ctx,
            kind=MemoryKind.NOTE,
            category="request",
            content=f"{ctx.subject} noted: {body}" if to_self else third_person(body, ctx.name),
            attribute="note",
            value=clean_value(body),
            event_time=first_date(body, ctx.at, prefer=guess_tense(body)),
            confidence=0.95,
        )
    ]
