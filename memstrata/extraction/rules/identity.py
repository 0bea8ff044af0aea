"""Identity rules: who the user is (name, home, work, languages, age, contact details...)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...models import MemoryKind
from ..base import Candidate, EntityMention, EntityType, ProfileSlot
from ..lexicon import (
    CAP,
    END,
    I_AM,
    I_OR_WE,
    LANGUAGES,
    LOWER,
    NAME,
    NATIONALITIES,
    OCCUPATIONS,
    ORG,
    PLACE,
    is_name,
)
from ..render import article, month_day
from .clause import Clause, candidate, clean_value

_NOT_USER_NAMES = NATIONALITIES | LANGUAGES
_NAME_RULES = (
    re.compile(rf"\bmy name(?: is|'s) (?P<v>{NAME}){END}", re.I),
    re.compile(rf"{I_AM} called (?P<v>{NAME}){END}", re.I),
    re.compile(rf"^(?:please )?call me (?P<v>{NAME}){END}", re.I),
    re.compile(rf"{I_OR_WE} go by (?P<v>{NAME}){END}", re.I),
    re.compile(rf"^(?:hi|hello|hey)?[,!]?\s*(?:i'm|i am|this is) (?P<v>{CAP}){END}", re.I),
)
"""The last one ("I'm Sam") is the weakest cue: its candidates get a lower confidence."""
_LOCATION_RULES = (
    re.compile(
        rf"{I_OR_WE} (?:currently |now |still )?(?:live|am living|'m living|are living|reside|stay) in "
        rf"(?P<v>{PLACE}|"
        rf"(?:a|an|the) [{LOWER} ]{{2,40}}?(?:near|outside(?: of)?|close to|in) {PLACE})",
        re.I,
    ),
    re.compile(
        rf"{I_OR_WE} (?:just |recently |finally |have |'ve )?(?:moved|relocated) (?:back )?to (?P<v>{PLACE})",
        re.I,
    ),
    re.compile(rf"{I_AM} (?:currently |now )?(?:based|living|located|settled) in (?P<v>{PLACE})", re.I),
    re.compile(rf"{I_OR_WE} (?:currently )?work (?:remotely )?from (?P<v>{PLACE})", re.I),
    re.compile(
        rf"{I_AM} (?:now |currently )?(?:back |over |out )?in (?P<v>{PLACE})(?= now| these days| nowadays| for good)"
        rf"|(?:^|(?<=[\s,;:]))now (?:i'm|i am) (?:back |over |out )?in (?P<w>{PLACE}){END}",
        re.I,
    ),
    re.compile(rf"{I_OR_WE} (?:just |recently |finally )?moved (?:away )?from {PLACE} to (?P<v>{PLACE})", re.I),
)
_ORIGIN = re.compile(rf"{I_AM} (?:originally )?from (?P<v>{PLACE})", re.I)
_EMPLOYER_RULES = (
    re.compile(rf"{I_OR_WE} (?:currently |now |still )?work (?:at|for) (?P<v>{ORG}){END}", re.I),
    re.compile(rf"{I_AM} (?:currently |now )?(?:employed|working) (?:at|by|for) (?P<v>{ORG}){END}", re.I),
    re.compile(
        rf"{I_OR_WE} (?:just |recently )?(?:started|joined|got) (?:a |my )?(?:new )?(?:job|position|role)? ?"
        rf"(?:at|with) "
        rf"(?P<v>{ORG}){END}",
        re.I,
    ),
    re.compile(rf"{I_OR_WE} (?:just |recently )?joined (?P<v>{CAP}(?: {CAP})*){END}", re.I),
    re.compile(
        rf"{I_OR_WE} (?:just |recently |now )?(?:joined|moved to|switched to|started at|work at|work for|am at|'m at) "
        rf"(?:a|an|the) (?:[\w\-]+ )?(?:startup|company|firm|agency|studio|lab|bank|nonprofit|consultancy|shop)"
        rf",? (?:called|named) (?P<v>{CAP}(?: {CAP})*){END}",
        re.I,
    ),
    re.compile(
        rf"{I_AM} (?:currently |now )?(?:a|an) (?:[\w\-]+ ){{0,4}}?(?:{OCCUPATIONS}) (?:at|for|with) "
        rf"(?P<v>{ORG}){END}",
        re.I,
    ),
)
_JOB = rf"(?P<v>(?:[{LOWER}\-]+ ){{0,4}}(?:{OCCUPATIONS})(?: (?:in|of) [{LOWER}]+(?: [{LOWER}]+)?)?)"
_JOB_RULES = (
    re.compile(rf"{I_OR_WE} (?:currently |now )?work (?:at|for) .+? as (?:a|an) {_JOB}{END}", re.I),
    re.compile(rf"{I_AM} (?:currently |now )?(?:a|an) {_JOB}{END}", re.I),
    re.compile(
        rf"{I_OR_WE}(?: (?:currently |now )?(?:work|am working|have been working)|'m working|'ve been working) "
        rf"as (?:a|an) (?P<v>[\w\- ]{{2,50}}?){END}",
        re.I,
    ),
    re.compile(rf"\bmy (?:job title|job|position|role|title) is (?:a |an )?(?P<v>[\w\- ]{{2,50}}?){END}", re.I),
    re.compile(
        rf"{I_OR_WE} (?:just |finally |recently )?(?:got |was |have been |'ve been )?promoted to "
        rf"(?:a |an )?{_JOB}{END}",
        re.I,
    ),
)
_TIMEZONE_RULES = (
    re.compile(r"\bmy time ?zone is (?P<v>[A-Za-z]{2,5}(?:[+-]\d{1,2})?|[A-Z][\w/]+(?: time)?)", re.I),
    re.compile(r"(?:i'm|i am|we're|we are) (?:in|on) (?:the )?(?P<v>[A-Z][\w/]+|[A-Z]{2,5}) time ?zone", re.I),
)
_LANGUAGE = re.compile(
    r"(?:^|(?<=\s))(?i:i|we) (?:also )?speak "
    r"(?P<v>[A-Z][a-z]+(?:(?:,| and| as well as)(?: a bit of| some| a little)? "
    r"[A-Z][a-z]+)*)",
)
_NATIVE_LANGUAGE = re.compile(r"\bmy (?:native|first|mother) (?:language|tongue) is (?P<v>[A-Z][a-z]+)", re.I)
_AGE = re.compile(
    rf"{I_AM} (?:now |only |almost |nearly )?(?P<v>1\d|[2-9]\d)"
    rf"(?: ?(?:years old|years of age|yrs old|y/o|yo)\b|(?=\s*(?:$|[,.;!)]|\s(?:and|but|now|so|too|btw|this year"
    rf"|going on|lol|haha|myself|here|soon)\b)))"
    rf"|{I_OR_WE} (?:just |recently )?turned (?P<w>1\d|[2-9]\d)\b",
    re.I,
)
"""An age of 10-99 ("I'm 34", "I am 34 years old", "I just turned 40"), never "I'm 5 minutes away"."""
_HEALTH = re.compile(
    rf"{I_AM} (?:severely |very |mildly |also )?(?P<v>lactose[- ]intolerant|gluten[- ]intolerant|diabetic|"
    r"celiac|coeliac|asthmatic|epileptic|colou?r[- ]?blind|deaf|hard of hearing|autistic|dyslexic|pregnant|an[a]?emic|"
    r"immunocompromised|neurodivergent|on the spectrum|in recovery|sober)\b"
    rf"|{I_OR_WE} (?:also )?have (?P<w>(?:type [12] )?diabetes|celiac(?: disease)?|coeliac(?: disease)?|asthma|adhd|"
    r"autism|dyslexia|epilepsy|chronic migraines|migraines|arthritis|ibs|crohn's(?: disease)?|long covid|"
    r"high blood pressure|a (?:bad|weak|dodgy) (?:back|knee|shoulder)|tinnitus|endometriosis|pcos)\b",
    re.I,
)
_PRONOUNS = re.compile(
    r"\bmy (?:preferred )?pronouns are (?P<v>[a-z]+ ?/ ?[a-z]+(?: ?/ ?[a-z]+)?|[a-z]+ and [a-z]+)"
    r"|(?:^|(?<=[\s,;:]))i (?:use|go by) (?P<w>[a-z]+/[a-z]+(?:/[a-z]+)?) pronouns"
    r"|^(?P<x>she/her|he/him|they/them|she/they|he/they|xe/xem|ze/zir) pronouns"
    r"|(?:^|(?<=[\s,;:]))i (?:use|go by) (?P<y>she/her|he/him|they/them|she/they|he/they|xe/xem|ze/zir)\b",
    re.I,
)
_BIRTHDAY = re.compile(r"\bmy birthday is (?:on )?(?P<v>.+?)$", re.I)
_EMAIL = re.compile(r"\bmy (?:e-?mail|e-?mail address) is (?P<v>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)", re.I)
_PHONE = re.compile(r"\bmy (?:phone|cell|mobile)(?: number)? is (?P<v>\+?[\d ()\-]{6,20}\d)", re.I)
_NATIONALITY = re.compile(rf"{I_AM} (?:a |an )?(?P<v>[A-Z][a-z\-]+)(?: citizen)?{END}")
_ALLERGY = re.compile(rf"{I_AM} (?:severely |very |mildly )?allergic to (?P<v>[\w\- ]+?){END}", re.I)

ValueOf = Callable[[re.Match[str], Clause], str | None]
"""The stored value for a match, or None to refuse the match."""


def _cleaned(match: re.Match[str], ctx: Clause) -> str | None:
    groups = match.groupdict()
    return clean_value(groups.get("v") or groups.get("w") or "")


def _employer(match: re.Match[str], ctx: Clause) -> str | None:
    if match.group("v").casefold() in ("home", "the moment", "the weekend"):
        return None
    return clean_value(match.group("v"))


def _language(match: re.Match[str], ctx: Clause) -> str | None:
    return clean_value(match.group("v")) if match.group("v").split()[0].casefold() in LANGUAGES else None


def _age(match: re.Match[str], ctx: Clause) -> str | None:
    return match.group("v") or match.group("w")


def _pronouns(match: re.Match[str], ctx: Clause) -> str | None:
    value = match.group("v") or match.group("w") or match.group("x") or match.group("y")
    return re.sub(r"\s*/\s*|\s+and\s+", "/", value.casefold())


def _birthday(match: re.Match[str], ctx: Clause) -> str | None:
    return month_day(match.group("v"), ctx.at)


def _as_written(match: re.Match[str], ctx: Clause) -> str | None:
    return match.group("v")


def _phone(match: re.Match[str], ctx: Clause) -> str | None:
    return match.group("v").strip()


def _nationality(match: re.Match[str], ctx: Clause) -> str | None:
    return match.group("v") if match.group("v").casefold() in NATIONALITIES else None


@dataclass(frozen=True, slots=True)
class _Slot:
    """One single-valued identity attribute: the patterns that state it and how to word it.

    `template` is formatted with `subject`, `value` and `article`. With `retry`, a match whose value
    is refused lets the next pattern try; without it, only the first pattern that matches counts.
    `hints`: words one of which every statement of the slot contains (lower case), a cheap test before
    the patterns; empty when the slot has no such word.
    """

    attribute: str
    patterns: tuple[re.Pattern[str], ...]
    template: str
    entity: EntityType | None = None
    value_of: ValueOf = _cleaned
    retry: bool = True
    hints: tuple[str, ...] = ()


_SLOTS = (
    _Slot("location", _LOCATION_RULES, "{subject} lives in {value}", entity="place"),
    _Slot("origin", (_ORIGIN,), "{subject} is originally from {value}", entity="place", hints=("from",)),
    _Slot("employer", _EMPLOYER_RULES, "{subject} works at {value}", entity="organization", value_of=_employer),
    _Slot(
        "job_title",
        _JOB_RULES,
        "{subject} works as {article} {value}",
        hints=("work", "job", "position", "role", "title", "i'm a", "i am a", "promoted"),
    ),
    _Slot("timezone", _TIMEZONE_RULES, "{subject}'s time zone is {value}", hints=("zone",)),
    _Slot(
        "language",
        (_LANGUAGE, _NATIVE_LANGUAGE),
        "{subject} speaks {value}",
        value_of=_language,
        retry=False,
        hints=("speak", "language", "tongue"),
    ),
    _Slot("age", (_AGE,), "{subject} is {value} years old", value_of=_age, hints=tuple("123456789")),
    _Slot("pronouns", (_PRONOUNS,), "{subject}'s pronouns are {value}", value_of=_pronouns, hints=("pronoun", "/")),
    _Slot("birthday", (_BIRTHDAY,), "{subject}'s birthday is on {value}", value_of=_birthday, hints=("birthday",)),
    _Slot("email", (_EMAIL,), "{subject}'s email address is {value}", value_of=_as_written, hints=("@",)),
    _Slot(
        "phone", (_PHONE,), "{subject}'s phone number is {value}", value_of=_phone, hints=("phone", "cell", "mobile")
    ),
    _Slot("nationality", (_NATIONALITY,), "{subject} is {value}", value_of=_nationality, hints=("i'm", "i am")),
    _Slot("allergy", (_ALLERGY,), "{subject} is allergic to {value}", hints=("allergic",)),
)
"""In the order their candidates are listed."""


def identity_rules(ctx: Clause) -> list[Candidate]:
    """The user's name, then every identity slot the clause states."""
    found = _name(ctx) + _health(ctx)
    low = ctx.clause.casefold()
    for slot in _SLOTS:
        if slot.hints and not any(hint in low for hint in slot.hints):
            continue
        hit = _first_value(slot.patterns, ctx, slot.value_of, retry=slot.retry)
        if hit is not None:
            value = hit[1]
            content = slot.template.format(subject=ctx.subject, value=value, article=article(value))
            found.append(_identity(ctx, slot.attribute, value, content, entity=slot.entity))
    return found


def _health(ctx: Clause) -> list[Candidate]:
    """A health condition the user states ("I'm lactose intolerant", "I have asthma"): many may hold."""
    low = ctx.clause.casefold()
    match = _HEALTH.search(ctx.clause) if "i'm" in low or "i am" in low or " have " in low else None
    if not match:
        return []
    value = clean_value(match.group("v") or match.group("w"))
    verb = "is" if match.group("v") else "has"
    content = f"{ctx.subject} {verb} {value}"
    return [candidate(ctx, kind=MemoryKind.FACT, category="identity", content=content, attribute="health", value=value)]


def _first_value(
    patterns: tuple[re.Pattern[str], ...], ctx: Clause, value_of: ValueOf, *, retry: bool = True
) -> tuple[re.Match[str], str] | None:
    """The first match whose value is accepted, with that value (without `retry`: the first match only)."""
    for pattern in patterns:
        match = pattern.search(ctx.clause)
        if match:
            value = value_of(match, ctx)
            if value is not None:
                return match, value
            if not retry:
                return None
    return None


def _user_name(match: re.Match[str], ctx: Clause) -> str | None:
    if not is_name(match.group("v")):
        return None
    value = clean_value(match.group("v"))
    return None if value.casefold() in _NOT_USER_NAMES else value


def _name(ctx: Clause) -> list[Candidate]:
    hit = _first_value(_NAME_RULES, ctx, _user_name)
    if hit is None:
        return []
    match, value = hit
    confidence = 0.75 if match.re is _NAME_RULES[-1] else 0.95
    content = f"The user's name is {value}"
    return [_identity(ctx, "name", value, content, entity="person", confidence=confidence)]


def _identity(
    ctx: Clause,
    attribute: str,
    value: str,
    content: str,
    *,
    entity: EntityType | None = None,
    confidence: float = 0.9,
) -> Candidate:
    return candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="identity",
        content=content,
        attribute=attribute,
        value=value,
        entities=(EntityMention(value, entity),) if entity else (),
        profile=ProfileSlot("identity", attribute, value),
        confidence=confidence,
    )
