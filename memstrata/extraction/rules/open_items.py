"""Open-item rules: reminders, to-dos, follow-ups and obligations ("remind me to ...", "I need to ...")."""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate
from ..dates import find_dates
from ..render import absolute_dates, render_date, third_person_object
from ..skip import leans_on_context, unresolved_referent
from .clause import Clause, candidate, clean_value, first_date

_OPEN_ITEM_RULES = (
    (
        "remind",
        re.compile(r"^(?:please )?remind me (?P<when>(?:[\w ]{0,25}? )?)(?:to|that) (?P<v>.+)$", re.I),
    ),
    (
        "remind_about",
        re.compile(r"^(?:please )?(?:remind|ping|nudge) me (?:about|re|regarding) (?P<v>.+)$", re.I),
    ),
    ("forget", re.compile(r"^(?:please )?(?:don't|do not) let me forget (?:to |about )?(?P<v>.+)$", re.I)),
    (
        "forget",
        re.compile(r"^(?:please )?(?:don't|do not) forget to remind me (?:to |about )?(?P<v>.+)$", re.I),
    ),
    (
        "follow",
        re.compile(
            r"^(?:let's |we should |we need to |i need to |i should |i'll |i will )?follow[ -]up "
            r"(?P<v>(?:with|on|about) .+)$",
            re.I,
        ),
    ),
    ("todo", re.compile(r"^(?:todo|to-do|to do)\s*[:\-]\s*(?P<v>.+)$", re.I)),
    (
        "need",
        re.compile(
            r"(?:^|(?<=[\s,;:]))i(?: (?:still|really|definitely|absolutely|also))?(?P<modal> need to| have to"
            r"| must| should| ought to|'ve got to| have got to| gotta|'m supposed to| am supposed to"
            r"|'m going to have to|(?:'ll| will)(?: (?:still|really|definitely|also|probably))? need to"
            r"|(?:'ve| have) been meaning to)\s+(?:really\s+|still\s+|definitely\s+)?(?:remember to\s+)?"
            r"(?P<v>[a-z].+)$",
            re.I,
        ),
    ),
)
_NOT_TASKS = re.compile(
    r"^(?:understand|know|learn|think|ask\b(?!\s+(?:my|his|her|their|our)\b)|see|say|admit|be honest|go\b|run\b|"
    r"leave|sleep|figure out how|correct (?:myself|that|this)|rephrase|repeat myself|"
    r"get back to (?:\w+ing\b|work\b|it\b|what\b)|[\w'-]+\W*$|"
    r"find out (?:how|what|why)|check (?:if|whether)|clarify|confirm|point out|mention|apologi[sz]e|thank|"
    r"get going|head out|log off|sign off|wrap up|be careful|do (?:the same|that|it|this|so|something)\b|do$|"
    r"keep (?:going|it up|at it)|hear|try it|give up)",
    re.I,
)
_EMBEDDED = re.compile(
    r"\b(?:what|which|that|who|whom|thought|think|guess|guessed|figured|know|knew|feel|felt|wish|hope|if|when)"
    r"(?:\s+[\w'-]+){0,2}\s*$",
    re.I,
)
_HEDGE = re.compile(
    r"(?:^|[,;:]\s*|\b(?:and|but|so)\s+)i (?:really |also )?(?:think|guess|feel like|figure)(?: that)?\s*$", re.I
)
"""The speaker's own hedge before the modal ("I think I should call the vet"): not an embedded clause."""
_ASKED = re.compile(
    r"\b(?:do|does|did|can|could|would|will|shall|should|must|am)\s*$"
    r"|\b(?:are|is|were|was) there\b|\b(?:do|does|did|can|could|would|will) you\b",
    re.I,
)
"""Before the modal, a question: inverted ("do I need to ...") or about something else ("are there any
criteria I should consider", "can you suggest places I should see")."""
_PLACE_REFERENT = re.compile(r"\b(?:in|out|over|up|down|back) there\b", re.I)
"""A place named only as "in there": which one, the conversation said."""
_WH_WORD = re.compile(r"^(?:what|how|why|who|where|when|which)\b", re.I)

_TEMPLATES = {
    "remind": "{subject} wants to be reminded to {body}{suffix}",
    "remind_about": "{subject} wants to be reminded about {body}",
    "forget": "{subject} wants to be reminded to {body}",
    "follow": "{subject} wants to follow up {body}",
    "todo": "{subject} has a to-do: {body}",
}
"""Wording per rule; "need" rules are worded from their modal verb instead."""
_MODALS = {
    "have to": "has to",
    "'ve got to": "has to",
    "have got to": "has to",
    "got to": "has to",
    "gotta": "has to",
    "am supposed to": "is supposed to",
    "still have to": "still has to",
    "need to": "needs to",
    "'m going to have to": "will have to",
    "'ve been meaning to": "has been meaning to",
    "have been meaning to": "has been meaning to",
}
_MODAL_ADVERB = re.compile(r"\b(?:still|really|definitely|also|probably) ")


def open_item_rules(ctx: Clause) -> list[Candidate]:
    """The open item the first matching rule finds; none when that match is not a task."""
    for kind, pattern in _OPEN_ITEM_RULES:
        match = pattern.search(ctx.clause)
        if match:
            return [] if _not_a_task(ctx.clause, match) else [_open_item(ctx, kind, match)]
    return []


def _not_a_task(clause: str, match: re.Match[str]) -> bool:
    """Embedded ("what I need to do"; the speaker's own "I think I should ..." is a hedge, not an
    embedding), asked ("do I need to ...", "are there places I should see"), not an action ("I need to
    think", "I need to practice"), or leaning on context ("replace the lights in there")."""
    item = match.group("v")
    before = clause[: match.start()]
    return bool(
        leans_on_context(item)
        or (_EMBEDDED.search(before) and not _HEDGE.search(before))
        or _ASKED.search(before)
        or _PLACE_REFERENT.search(item)
        or _NOT_TASKS.match(item)
        or unresolved_referent(item)
        or _WH_WORD.match(item)
    )


def _open_item(ctx: Clause, kind: str, match: re.Match[str]) -> Candidate:
    item = ctx.original[match.start("v") : match.end("v")]
    body = third_person_object(absolute_dates(item, find_dates(item, ctx.at, prefer="future")), ctx.name)
    return candidate(
        ctx,
        kind=MemoryKind.TASK,
        category="open_item",
        content=_wording(ctx, kind, match, body),
        attribute="task",
        value=clean_value(item),
        event_time=first_date(ctx.original[match.start() : match.end()], ctx.at, prefer="future"),
        confidence=0.85,
    )


def _wording(ctx: Clause, kind: str, match: re.Match[str], body: str) -> str:
    template = _TEMPLATES.get(kind)
    if template is not None:
        return template.format(subject=ctx.subject, body=body, suffix=_when_suffix(ctx, match))
    modal = match.group("modal").strip().casefold().replace("'m supposed", "is supposed")
    modal = _MODAL_ADVERB.sub("", modal).replace("'ll ", "will ")
    return f"{ctx.subject} {_MODALS.get(modal, modal)} {body}"


def _when_suffix(ctx: Clause, match: re.Match[str]) -> str:
    """The date a "remind me <when> to" names, as " on 14 May 2024"; else ""."""
    when = match.groupdict().get("when") or ""
    mentions = find_dates(when, ctx.at, prefer="future") if when.strip() else []
    return f" on {render_date(mentions[0])}" if mentions else ""
