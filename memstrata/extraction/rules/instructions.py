"""Instruction rules: how the user wants the assistant to behave ("always reply in French",
"keep your answers short", "when you write code, add type hints"), and how to reach the user
("the best time to reach me is ...", "the best way to reach me is WhatsApp").

An order given to the assistant is a standing instruction: a `MemoryKind.PROCEDURE` candidate of
category "instruction" (keeping its preference slot, e.g. "preference:response_language", so a later
order replaces it). How to reach the user is a preference about the user, not an instruction.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...models import MemoryKind
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
    r"\b(?:the )?(?:best|easiest|quickest|fastest|preferred|simplest) (?P<what>time|way|channel|method|place)s? "
    r"(?:to (?:reach|contact|call|get hold of|get in touch with|message|text) me|for me|of contacting me) "
    r"(?:is|would be|=)(?: (?:via|through|by|on|over))? (?P<v>[^,.;!?]+)",
    re.I,
)
CONTACT_ORDER = re.compile(
    r"^(?:please )?(?P<v>text|call|ring|email|e-mail|message|dm|whatsapp|slack|ping) me (?:rather than|instead of|over|"
    r"not|and not|only|first|on|via)\b"
    r"|^(?:please )?(?:reach|contact|find|ping|message|text|call|get (?:hold of|in touch with)) me (?:on|via|through|"
    r"over|by) (?P<w>e-?mail|phone|text|sms|whatsapp|slack|telegram|signal)\b",
    re.I,
)
"""How to reach the user, as an order: "text me rather than calling", "email me instead of calling"."""
_TIME_WORDS = re.compile(
    r"\b(?:morning|afternoon|evening|night|noon|midday|weekend|weekday|before|after|between|around|am|pm|"
    r"\d{1,2}(?::\d\d)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b",
    re.I,
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
    rf"keep|avoid|don't|do not|never|make|skip|leave out|exclude|mention|ask|check|tell|remind|stick|focus|"
    rf"prioriti[sz]e|assume|go easy|be|stay|try|cite|link|mark|flag|double-check)\b.+)$",
    re.I,
)
_STANDING = r"(?:from now on|going forward|moving forward|in (?:the )?future|from here on(?: out)?|every time|always)"
STANDING_ORDER = re.compile(
    rf"^(?:please,? )?(?:(?:{_STANDING}),? (?:please )?)?(?P<v>(?:stop|quit) (?:using|adding|sending|putting|"
    rf"calling|saying|giving|writing|including|suggesting|recommending)\b.+"
    rf"|(?:use|reply|respond|answer|write|talk|speak|address|format|keep|give|include|add|call|send|explain"
    rf"|translate|sign)\b.+(?:\b{_STANDING}\b.*)?)$",
    re.I,
)
"""An imperative that stands: "stop using emojis", "from now on, reply in Spanish", "use metric units
going forward" (without a standing marker, a bare imperative is a one-off request and yields nothing)."""
STANDING_WANT = re.compile(
    r"(?:^|(?<=[\s,;:]))i(?:'d| would)? (?:like|want|need) (?P<v>.+?) "
    r"(?:from now on|going forward|in (?:the )?future"
    r"|every time|always)\b",
    re.I,
)


def contact_order(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """The contact-method slot from "text me rather than calling"."""
    said = (match.group("v") or match.group("w")).casefold()
    found = topic(f"contact by {said}", 1)
    channel = {"ring": "phone", "dm": "direct message", "ping": "message", "message": "message"}.get(said)
    return topic_preference(ctx, found if found else ("preference:contact_method", channel or "message"))


def as_instruction(found: Candidate) -> Candidate:
    """`found` as a standing instruction: a procedure, keeping its slot, value and profile key."""
    return replace(found, kind=MemoryKind.PROCEDURE, category="instruction")


def keep_it(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """The answer-length slot from "keep your answers short"."""
    value = "long" if match.group("v").casefold() in ("long", "detailed") else "short"
    return as_instruction(topic_preference(ctx, ("preference:answer_length", value)))


def contact_time(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """When or how to reach the user: "the best time to reach me is after 5pm" is a time, "the best
    way to reach me is WhatsApp" a channel (a "way" naming a time, "the best way is after 5pm", is a time).
    """
    value = clean_value(match.group("v"))
    if not value or blocked_object(value):
        return None
    is_time = match.group("what").casefold() == "time" or bool(_TIME_WORDS.search(value))
    if not is_time:
        method = topic(f"contact by {value}", 1)
        channel = method[1] if method and method[0] == "preference:contact_method" else value
        return topic_preference(ctx, ("preference:contact_method", channel))
    content = f"The best time to reach {ctx.subject} is {value}"
    return preference(ctx, content, attribute="preference:contact_time", value=value)


_IDIOM = re.compile(
    r"^(?:never|don't|do not)\s+(?:say never|give up|mind|stop (?:believing|trying|dreaming|learning)|look back|"
    r"worry|forget (?:where|who)|judge a book|count your|let (?:anyone|anybody|them) )",
    re.I,
)


def instruction(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """An "always/never/don't ..." order: a known slot, else the instruction itself, about the user.
    Sayings ("never say never", "don't give up") are no orders."""
    if _IDIOM.match(ctx.clause[match.start() :]):
        return None
    polarity = -1 if match.group("adv").casefold().startswith(("never", "don't", "do not")) else 1
    found = topic(match.group("v"), polarity)
    if found:
        return as_instruction(topic_preference(ctx, found))
    text = sentence(re.sub(r"^please\s+", "", ctx.original[match.start() :], flags=re.I))
    rendered = re.sub(r"\bmy\b", f"{ctx.subject}'s", text, flags=re.I)
    return _standing_instruction(ctx, re.sub(r"\bme\b", ctx.subject, rendered, flags=re.I))


def standing_order(ctx: Clause, match: re.Match[str]) -> Candidate | None:
    """An imperative that holds beyond this reply ("stop using emojis", "from now on, answer in French")."""
    order = match.group("v")
    stop = order.casefold().startswith(("stop ", "quit "))
    if not stop and not re.search(rf"\b{_STANDING}\b", ctx.clause, re.I):
        return None
    found = topic(order, -1 if stop else 1)
    if found:
        return as_instruction(topic_preference(ctx, found))
    text = sentence(ctx.original[match.start("v") :])
    return _standing_instruction(ctx, re.sub(r"\bme\b", ctx.subject, text, flags=re.I))


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
        return as_instruction(topic_preference(ctx, found))
    value = preferred_object(whole)
    wanted = preference(ctx, f"{ctx.subject} wants {value} from now on", attribute=None, value=value, confidence=0.75)
    return as_instruction(wanted)


def _standing_instruction(ctx: Clause, rendered: str) -> Candidate:
    found = preference(ctx, f"Standing instruction from {ctx.subject}: {rendered}", attribute=None, value=None)
    return as_instruction(found)
