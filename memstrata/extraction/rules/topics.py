"""Preference slots: the known topics a preference may name, their wording, and the preference builder.

"short answers" names the slot ("preference:answer_length", "short"); "by email" names
("preference:contact_method", "email"). A preference in a known slot replaces the previous value;
anything else is stored as a multi-valued "likes" / "habit" or as a standing instruction.
"""

from __future__ import annotations

import re

from ...models import MemoryKind
from ..base import Candidate, ProfileSlot
from ..lexicon import LANGUAGES
from ..render import article
from .clause import Clause, candidate, clean_value

Topic = tuple[str, str]
"""(attribute, value), e.g. ("preference:answer_length", "short")."""

_PROFILE_KEYS = {
    "preference:contact_time": "preferred_contact_time",
    "preference:contact_method": "preferred_contact_method",
    "preference:answer_length": "answer_length",
    "preference:response_language": "response_language",
    "preference:units": "units",
    "preference:theme": "theme",
    "preference:tone": "tone",
    "preference:format": "answer_format",
    "preference:emojis": "emojis",
    "diet": "diet",
}
_ONE_WORD_SLOTS = (
    ("preference:units", r"\b(metric|imperial)\b"),
    ("preference:theme", r"\b(dark|light) (?:mode|theme)\b"),
    ("preference:tone", r"\b(informal(?:ly)?|formal(?:ly)?|casual(?:ly)?)\b"),
    ("preference:format", r"\b(bullet points?|tables?|prose|markdown|numbered lists?|plain text)\b"),
)
_CONTACT_METHODS = {
    "calls": "phone",
    "call": "phone",
    "phone calls": "phone",
    "phone call": "phone",
    "whatsapp": "WhatsApp",
    "slack": "Slack",
    "telegram": "Telegram",
    "signal": "Signal",
    "sms": "SMS",
    "texts": "text",
}


def topic(text: str, polarity: int) -> Topic | None:
    """A known preference slot in `text` ("short answers" -> ("preference:answer_length", "short"))."""
    low = text.casefold()
    found = _answer_length(low, polarity) or _contact_method(low, polarity) or _response_language(low)
    if found:
        return found
    for attribute, pattern in _ONE_WORD_SLOTS:
        match = re.search(pattern, low)
        if match and polarity > 0:
            return attribute, match.group(1).removesuffix("ly")
    if re.search(r"\bemojis?\b", low):
        return "preference:emojis", "yes" if polarity > 0 else "no"
    return None


def _answer_length(low: str, polarity: int) -> Topic | None:
    if not re.search(r"\b(?:answers?|repl(?:y|ies)|responses?|explanations?|messages?|summar(?:y|ies)|them)\b", low):
        return None
    short = re.search(r"\b(?:short|shorter|brief|concise|succinct|terse|tight|to the point)\b", low)
    long_ = re.search(r"\b(?:long|longer|detailed|in-depth|thorough|lengthy|comprehensive)\b", low)
    if not (short or long_):
        return None
    return "preference:answer_length", "short" if (short and not long_) == (polarity > 0) else "long"


def _contact_method(low: str, polarity: int) -> Topic | None:
    method = re.search(r"\b(e-?mail|phone(?: calls?)?|calls?|texts?|sms|whatsapp|slack|telegram|signal)\b", low)
    if not (
        method
        and re.search(r"\b(?:over|to|rather than|instead of|by|via|through|on)\b|contact|reach", low)
        and polarity > 0
    ):
        return None
    value = method.group(1).replace("e-mail", "email")
    return "preference:contact_method", _CONTACT_METHODS.get(value, value)


def _response_language(low: str) -> Topic | None:
    language = re.search(r"\bin (" + "|".join(LANGUAGES) + r")\b", low)
    if language and re.search(r"\b(?:reply|replies|respond|answer|write|speak|talk|responses|answers)\b", low):
        return "preference:response_language", language.group(1).capitalize()
    return None


def _topic_content(subject: str, attribute: str, value: str) -> str:
    templates = {
        "preference:answer_length": f"{subject} prefers {value} answers",
        "preference:contact_method": f"{subject} prefers to be contacted by {value}",
        "preference:response_language": f"{subject} wants replies in {value}",
        "preference:units": f"{subject} prefers {value} units",
        "preference:theme": f"{subject} prefers {value} mode",
        "preference:tone": f"{subject} prefers to be addressed in {article(value)} {value} tone",
        "preference:format": f"{subject} prefers answers formatted as {value}",
        "preference:emojis": f"{subject} {'likes' if value == 'yes' else 'does not want'} emojis in answers",
    }
    return templates.get(attribute, f"{subject} prefers {value}")


def topic_preference(ctx: Clause, found: Topic) -> Candidate:
    """The preference for a known slot, in that slot's wording ("The user prefers short answers.")."""
    attribute, value = found
    return preference(ctx, _topic_content(ctx.subject, attribute, value), attribute=attribute, value=value)


def preference(
    ctx: Clause,
    content: str,
    *,
    attribute: str | None,
    value: str | None,
    polarity: int = 1,
    confidence: float = 0.85,
) -> Candidate:
    """A preference candidate; known slots and favorites also fill a profile key."""
    key = _PROFILE_KEYS.get(attribute or "")
    if key is None and attribute and attribute.startswith("preference:favorite_"):
        key = attribute.removeprefix("preference:")
    return candidate(
        ctx,
        kind=MemoryKind.PREFERENCE,
        category="preference",
        content=content,
        attribute=attribute,
        value=value,
        polarity=polarity,
        profile=ProfileSlot("preference", key, value) if key and value else None,
        confidence=confidence,
    )


def preferred_object(text: str) -> str:
    """The liked/disliked thing: cut at the first clause boundary."""
    cut = re.split(r"[,;.!?()]| but | because | since | especially | although | though ", text, maxsplit=1)[0]
    return clean_value(_TRAILING_TIME.sub("", cut))


_TRAILING_TIME = re.compile(
    r"(?:\s+(?:now|any ?more|these days|nowadays|lately|either|at all|honestly|tbh|lol|haha|too|as well|"
    r"so much|a lot|more than ever|most of all))+\s*$",
    re.I,
)
