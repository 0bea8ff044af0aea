"""Instruction rules: how the user wants the assistant to behave ("always reply in French",
"keep your answers short", "when you write code, add type hints", "the best time to reach me is ...").
"""

from __future__ import annotations

import re

from ..base import Candidate
from ..render import sentence
from ..skip import blocked_object
from .clause import Clause, clean_value
from .topics import preference, preferred_object, topic, topic_preference

KEEP_IT = re.compile(
    r"^(?:please )?keep (?:your|the|all) (?:answers|replies|responses|explanations|messages|summaries)"
    r" (?P<v>short|brief|concise|succinct|tight|long|detailed)\b",
    re.I,
)
CONTACT_TIME = re.compile(
    r"\b(?:the )?best (?:time|way) to (?:reach|contact|call|get hold of) me is (?P<v>[^,.;!?]+)", re.I
)
INSTRUCTION = re.compile(
    r"^(?:please )?(?P<adv>always|never|don't ever|do not ever|don't|do not|from now on,?)\s+"
    r"(?P<v>(?:send|use|reply|respond|answer|write|call|email|e-mail|message|text|contact|include|add|suggest|"
    r"give(?! up)|show|ask|explain|format|address|mention|put|say|recommend|book|schedule|start|end|sign|"
    r"assume|make|translate|summari[sz]e|cc|copy)\b.*)$",
    re.I,
)
_OUTPUT_VERBS = (
    r"write|answer|reply|respond|explain|summari[sz]e|give|suggest|show|send|recommend|translate|format|code|"
    r"generate|create|draft|list|use|include|add|quote|cite|plan|book|schedule|describe|review"
)
WHEN_YOU = re.compile(
    rf"^when(?:ever)? you (?P<cond>(?:{_OUTPUT_VERBS})\b[^,]*), (?:please )?(?:always )?"
    rf"(?P<v>(?:{_OUTPUT_VERBS}|"
    rf"keep|avoid|don't|do not|never|make)\b.+)$",
    re.I,
)
STANDING_WANT = re.compile(
    r"(?:^|(?<=[\s,;:]))i(?:'d| would)? (?:like|want|need) (?P<v>.+?) "
    r"(?:from now on|going forward|in (?:the )?future"
    r"|every time|always)\b",
    re.I,
)


def keep_it(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """The answer-length slot from "keep your answers short"."""
    value = "long" if match.group("v").casefold() in ("long", "detailed") else "short"
    return topic_preference(ctx, ("preference:answer_length", value))


def contact_time(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """When to reach the user, from "the best time to reach me is after 5pm"."""
    value = clean_value(match.group("v"))
    content = f"The best time to reach {ctx.subject} is {value}"
    return preference(ctx, content, attribute="preference:contact_time", value=value)


def instruction(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """An "always/never/don't ..." order: a known slot, else the instruction itself, about the user."""
    polarity = -1 if match.group("adv").casefold().startswith(("never", "don't", "do not")) else 1
    found = topic(match.group("v"), polarity)
    if found:
        return topic_preference(ctx, found)
    text = sentence(re.sub(r"^please\s+", "", ctx.original[match.start() :], flags=re.I))
    rendered = re.sub(r"\bmy\b", f"{ctx.subject}'s", text, flags=re.I)
    return _standing_instruction(ctx, re.sub(r"\bme\b", ctx.subject, rendered, flags=re.I))


def when_you(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """A conditional order ("when you write code, add type hints"), about the user."""
    text = sentence(ctx.original[match.start() :])
    return _standing_instruction(ctx, re.sub(r"\bme\b", ctx.subject, text, flags=re.I))


def standing_want(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """A standing wish ("I'd like X from now on"): a known slot, else what the user wants."""
    whole = match.group("v")
    if blocked_object(whole):
        return None
    found = topic(whole, 1)
    if found:
        return topic_preference(ctx, found)
    value = preferred_object(whole)
    return preference(ctx, f"{ctx.subject} wants {value} from now on", attribute=None, value=value, confidence=0.75)


def _standing_instruction(ctx: Clause, rendered: str) -> Candidate:
    return preference(ctx, f"Standing instruction from {ctx.subject}: {rendered}", attribute=None, value=None)
