"""Offline, rule-based extraction: regular expressions over user messages (no model, no I/O).

Precision comes before recall: a sentence that is a question, a hypothetical, reported speech,
code, an error message or small talk yields nothing, and each rule needs an explicit cue
("I live in", "my manager Sarah", "remind me to", a date plus an event verb...).

Conventions the labelled benchmark follows:
- "remember that X" yields the structured candidate for X when a rule recognizes X
  (an identity, relation or preference); otherwise a `request` note holding X.
- A sentence that states an identity, preference, birthday or open item is not also an event;
  naming a relative ("my friend Kofi ...") does not stop the rest of the sentence being an event.
- Dates in content are rewritten to absolute dates resolved against the message time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..models import MemoryKind
from .base import Candidate, EntityMention, EntityType, Message, ProfileSlot
from .dates import DateMention, Prefer, find_dates, guess_tense

# --- lexicon ----------------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _aliases(spec: str) -> dict[str, str]:
    """Parse "canonical: alias alias" lines (bare words map to themselves; "_" in an alias is a space)."""
    table: dict[str, str] = {}
    for line in spec.splitlines():
        canonical, _, aliases = line.strip().rpartition(":")
        for word in aliases.split():
            table[word.replace("_", " ")] = canonical.strip() or word
        if canonical:
            table[canonical.strip().replace("_", " ")] = canonical.strip()
    return table


_UPPER = "A-ZÀ-ÖØ-Þ"
_LOWER = "a-zß-öø-ÿ"
_CAP = rf"(?-i:(?!I\b)[{_UPPER}](?:[{_LOWER}{_UPPER}\-]|'(?=[{_UPPER}]))*)"
_CAP_POSSESSIVE = rf"{_CAP}(?:'s)?"
_NAME = rf"(?:(?-i:Dr|Mr|Mrs|Ms|Prof)\.? )?{_CAP}(?: {_CAP})?"
_PLACE = (
    rf"(?:St\. )?{_CAP}(?:(?: |-)(?:(?:de|del|da|do|upon|on|am|sur|la|le|of) )?{_CAP})*"
    rf"(?:, {_CAP}(?: {_CAP})*)?"
)
_ORG = (
    rf"(?:St\. )?{_CAP_POSSESSIVE}(?:(?: | & | of )(?:St\. )?{_CAP_POSSESSIVE})*"
    rf"|(?:the|a|an) [{_LOWER}][{_LOWER}\-]*(?: [{_LOWER}][{_LOWER}\-]*){{0,3}}?"
)
_END = (
    r"(?=\s*(?:$|[,.;!?)]|\s(?:now|not|and|but|by the way|btw|here|originally|as|with|since|for|in|at|on|too"
    r"|though"
    r"|anymore|last|next|this|yesterday|today|tomorrow|from|after|before|until)\b))"
)

_NOT_NAMES = _wordset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december the a an this that it he she they we you i my your our
    his her their not just so sure ok okay fine good great sorry ready done here back also still very
    going trying looking working glad happy tired new old mr mrs ms dr prof"""
)

_NATIONALITIES = _wordset(
    """american british english scottish welsh irish canadian mexican brazilian argentinian chilean
    colombian peruvian german french italian spanish portuguese dutch belgian swiss austrian swedish
    norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish
    russian ukrainian serbian croatian slovenian estonian latvian lithuanian israeli egyptian moroccan
    nigerian kenyan ghanaian ethiopian south-african indian pakistani bangladeshi chinese japanese
    korean vietnamese thai filipino indonesian malaysian singaporean australian kiwi iranian iraqi
    lebanese syrian saudi"""
)

_LANGUAGES = _wordset(
    """english spanish german french italian portuguese dutch swedish norwegian danish finnish polish czech
    russian ukrainian greek turkish arabic hebrew hindi urdu bengali chinese mandarin cantonese japanese
    korean vietnamese thai indonesian swahili"""
)

_OCCUPATIONS = (
    "engineer|developer|programmer|designer|nurse|doctor|physician|surgeon|teacher|professor|lecturer|tutor|"
    "student|researcher|scientist|accountant|lawyer|attorney|paralegal|manager|analyst|consultant|architect|"
    "pilot|chef|cook|baker|writer|author|journalist|editor|photographer|artist|musician|actor|actress|"
    "pharmacist|dentist|therapist|psychologist|electrician|plumber|carpenter|mechanic|driver|firefighter|"
    "officer|technician|administrator|founder|co-founder|ceo|cto|cfo|coo|intern|freelancer|translator|"
    "economist|marketer|recruiter|salesperson|paramedic|veterinarian|vet|farmer|cashier|clerk|librarian|"
    "biologist|chemist|physicist|mathematician|statistician|entrepreneur|specialist|coordinator|director|"
    "coach|trainer|barista|waiter|waitress|bartender|nanny|secretary|banker|broker|agent|auditor|executive|"
    "soldier|sergeant|retiree|pensioner|midwife|caregiver|social worker|counselor|counsellor|illustrator|"
    "animator|copywriter|strategist|advisor|adviser|investigator|inspector|lead|owner|postdoc|resident|"
    "apprentice|contractor|assistant|representative|planner|producer|scientist|sysadmin|devops|tester"
)

_RELATIONS = _aliases(
    """wife husband partner girlfriend boyfriend spouse son daughter sister brother sibling aunt uncle cousin
    niece nephew friend mentor therapist doctor dentist assistant cat dog pet stepson stepdaughter
    fiance: fiancé fiancée fiancee
    children: kids
    child: kid
    mother: mom mum mommy
    father: dad daddy
    grandmother: grandma granny
    grandfather: grandpa
    best_friend: best_friend
    roommate: flatmate housemate
    neighbor: neighbour
    manager: boss supervisor line_manager
    colleague: coworker co-worker teammate
    team_lead: team_lead tech_lead
    landlord: landlady
    cofounder: co-founder
    dog: puppy
    cat: kitten"""
)
_PETS = frozenset({"cat", "dog", "pet"})
_REL = "(?P<rel>" + "|".join(sorted((re.escape(k) for k in _RELATIONS), key=len, reverse=True)) + ")"

_EVENT_NOUNS = (
    r"appointment|interview|meeting|party|wedding|conference|offsite|off-site|presentation|surgery|"
    r"operation|exam|test|flight|trip|vacation|holiday|concert|birthday|anniversary|day off|first day|"
    r"deadline|ceremony|graduation|funeral|reunion|recital|match|game|race|marathon|checkup|check-up|"
    r"dinner|lunch|date|launch|release|demo|review|visit|move|festival|show|class|course|workshop"
)
_EVENT_CUE = re.compile(
    rf"\b(?:{_EVENT_NOUNS})s?\b"
    r"|\b(?:i'?m|i am|we'?re|we are|is|are|am|'s)\s+(?:\w+ly\s+)?\w+ing\b"
    r"|\b(?:i|we|he|she|they)\s+(?:just\s+|finally\s+|already\s+|also\s+)?"
    r"(?:[a-z]+ed|went|ran|had|got|took|made|saw|met|came|left|began|won|lost|bought|sold|flew|drove|"
    r"wrote|gave|did|quit|became|broke|found|spent)\b"
    r"|\b(?:'ll|will)\s+be\b|\b(?:i|we)\s+(?:'ll|will)\s+\w+",
    re.IGNORECASE,
)
_PERSONAL = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|us)\b", re.IGNORECASE)

# --- filters ----------------------------------------------------------------------------------

_CODE_OR_ERROR = re.compile(
    r"```|^\s*Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+|^\s*at [\w.$<>]+\(.*\)\s*$"
    r"|^\s*[\w.]*(?:Error|Exception|Warning)\b\s*:|^\s*(?:error|fatal|warning|panic)\b\s*[:!]|\bERR!"
    r"|\bE[A-Z]{5,}\b|^\s*(?:def|class|import|from \S+ import|function|const|let|var|#include|public|"
    r"private|return)\b.*[=(){};:]",
    re.MULTILINE,
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening|night)|thanks|thank you|thx|ty|cheers|"
    r"ok(?:ay)?|sure|great|nice|cool|perfect|awesome|got it|sounds good|lol|haha|hmm+|yes|yeah|yep|no|nope|"
    r"bye|goodbye|see you)\b[\s!.,:)(]*",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:(?:what|who|whom|whose|where|when|why|how|which)(?:'s|'re|'d)?\s+(?:\w+\s+)?"
    r"(?:is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|have|has|had)\b"
    r"|(?:what|who|where|why|how)(?:'s|'re)\b"
    r"|(?:is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|have|has|had|isn't|"
    r"aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't)\s+(?:i|you|we|they|he|she|it|my|"
    r"your|our|the|this|that|there|these|those|anyone|someone)\b)",
    re.IGNORECASE,
)
_QUESTION_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?(?=remind me (?:to|about|in|on|tomorrow|next)\b|remember\b"
    r"|note\b"
    r"|make a note\b|keep in mind\b|save\b)",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if(?! possible| you can| you could| that's ok)|suppose|supposing|imagine|pretend|hypothetically|"
    r"let's say|lets say|say that|what if|wonder|wondering|maybe|perhaps|might|someday|some day|in theory|"
    r"assuming|would(?! rather| prefer| like| love)|were i|whether)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|told|tells|claims|claimed|wrote|writes|mentioned|quote|quoted|translate|translation|"
    r"novel|story|character|the phrase|the sentence|how do i say)\b",
    re.IGNORECASE,
)
_DISCOURSE = re.compile(
    r"^(?:(?:oh|ah|also|and|so|well|btw|by the way|fyi|actually|honestly|anyway|anyways|correction|sorry|"
    r"okay|ok|right|oh and|oh also|one more thing|update|quick update|ps|p\.s\.)\b[\s,:;!\-]*)+",
    re.IGNORECASE,
)
_REQUEST_PREFIX_ONLY = re.compile(
    r"(?:please )?(?:remember|note|keep in mind|bear in mind|don't forget|do not forget|for (?:future|your) "
    r"reference|for the record|just so you know|fyi|save this|store this)[\s:,\-]*",
    re.IGNORECASE,
)
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|Jr|Sr|Prof|vs|etc|e\.g|i\.e|approx|No)\.$")

# --- data -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Context:
    """What every rule needs: the clause, its original text, the message time, the user's name."""

    clause: str  # quoted passages masked with underscores
    original: str
    at: datetime
    name: str | None

    @property
    def subject(self) -> str:
        return self.name or "the user"


Rule = Callable[[_Context], "list[Candidate]"]


# --- rendering --------------------------------------------------------------------------------

_ADVERBS = (
    "really|just|also|usually|always|never|still|often|sometimes|absolutely|totally|truly|honestly|actually|"
    "definitely|generally|normally|typically|mostly|now|currently|recently|finally|already|only|even"
)
_IRREGULAR_3RD = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_PAST_OR_MODAL = _wordset(
    """can could will would shall should must might may went ran had got took made saw met came left began
    won lost bought sold flew drove wrote gave did quit became broke found spent was were said told
    thought knew felt kept sent paid put read set let hit cut"""
)


def _conjugate(verb: str) -> str:
    low = verb.casefold()
    stem = re.sub(r"^(?:re|un|over|under|mis|out|with)(?=[a-z]{3,})", "", low)
    if low in _PAST_OR_MODAL or stem in _PAST_OR_MODAL or low.endswith(("ed", "n't")):
        return verb
    if low in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


_SUBJ, _POSS, _OBJ = "\x01", "\x02", "\x03"


def third_person(text: str, name: str | None = None) -> str:
    """Rewrite a first-person statement about the user in the third person.

    The first mention uses the name ("I love my morning run" -> "The user loves their morning run",
    or "Ben loves ..."); later possessives and objects become "their" / "them".
    """
    out = text.strip()
    replacements: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
        (r"\bI'm not\b|\bI am not\b", f"{_SUBJ} is not"),
        (r"\bI'm\b|\bI am\b", f"{_SUBJ} is"),
        (r"\bI've\b", f"{_SUBJ} has"),
        (r"\bI'd\b", f"{_SUBJ} would"),
        (r"\bI'll\b", f"{_SUBJ} will"),
        (r"\bI don't\b|\bI do not\b", f"{_SUBJ} does not"),
        (r"\bwe're\b", f"{_SUBJ} and others are"),
        (r"\bwe've\b", f"{_SUBJ} and others have"),
        (r"\bwe'll\b", f"{_SUBJ} and others will"),
        (
            rf"\bI((?:\s+(?:{_ADVERBS}))*)\s+([{_LOWER}']+)",
            lambda m: f"{_SUBJ}{m.group(1)} {_conjugate(m.group(2))}",
        ),
        (r"\bI\b", _SUBJ),
        (r"\bwe\b", f"{_SUBJ} and others"),
        (r"\bus\b", f"{_OBJ} and others"),
        (r"\bmy\b|\bour\b|\bmine\b|\bours\b", _POSS),
        (r"\bmyself\b", "themselves"),
        (r"\bme\b", _OBJ),
        (r"\byour\b", "the assistant's"),
        (r"\byou\b", "the assistant"),
    ]
    for pattern, replacement in replacements:
        out = re.sub(pattern, replacement, out, flags=re.IGNORECASE)
    return _sentence(_name_placeholders(out, name or "the user"))


def _name_placeholders(text: str, subject: str) -> str:
    """Replace subject/possessive/object placeholders: the name first, pronouns after."""
    pieces = []
    named = False
    for char in text:
        if char == _SUBJ:
            pieces.append(subject)
            named = True
        elif char == _POSS:
            pieces.append("their" if named else f"{subject}'s")
            named = True
        elif char == _OBJ:
            pieces.append("them" if named else subject)
            named = True
        else:
            pieces.append(char)
    return "".join(pieces)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:-")
    text = re.sub(r"[.!?]+$", "", text)
    if not text:
        return text
    return text[0].upper() + text[1:] + "."


def _render_date(mention: DateMention) -> str:
    start = mention.start
    day = f"{start.day} {start:%B %Y}"
    if mention.granularity == "minute":
        return f"{day} at {start:%H:%M}"
    if mention.granularity == "week":
        return f"the week of {day}"
    if mention.granularity == "weekend":
        return f"the weekend of {day}"
    if mention.granularity == "month":
        return f"{start:%B %Y}"
    if mention.granularity == "year":
        return f"{start.year}"
    return day


_LEADING_PREPOSITION = re.compile(
    r"^(?P<prep>on|in|within|by|before|after|until|since|during|early|late|mid|end of|beginning of)\s+",
    re.IGNORECASE,
)
_PRECEDING_PREPOSITION = re.compile(
    r"\b(?:on|in|by|before|after|until|till|since|during|from|to|at|about|around|roughly|almost|nearly)\s*$",
    re.I,
)


def _absolute_dates(text: str, mentions: Sequence[DateMention]) -> str:
    """`text` with each relative date phrase replaced by the absolute date it stands for."""
    pieces: list[str] = []
    cursor = 0
    for mention in mentions:
        start, end = mention.span
        before = text[cursor:start]
        phrase = text[start:end]
        lead = _LEADING_PREPOSITION.match(phrase)
        keep = (
            lead.group("prep").lower() if lead and lead.group("prep").lower() not in ("in", "within") else ""
        )
        if keep:
            rendered = f"{keep} {_render_date(mention)}"
        elif _PRECEDING_PREPOSITION.search(before):
            rendered = _render_date(mention)
        elif mention.granularity in ("month", "year", "week"):
            rendered = f"in {_render_date(mention)}"
        else:
            rendered = f"on {_render_date(mention)}"
        pieces.extend([before, rendered])
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


# --- text preparation -------------------------------------------------------------------------


def _normalize(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())


def _mask_quotes(text: str) -> str:
    """Replace quoted passages by underscores (same length): quoted words are not the user's statements."""

    def blank(match: re.Match[str]) -> str:
        return match.group(0)[0] + "_" * (len(match.group(0)) - 2) + match.group(0)[-1]

    text = re.sub(r'"[^"]*"', blank, text)
    return re.sub(r"(?<![\w])'[^']*'(?![\w])", blank, text)


def _sentences(text: str) -> Iterator[str]:
    start = 0
    for match in re.finditer(r"[.!?]+(?=\s|$)|\n+|;", text):
        piece = text[start : match.end()]
        if match.group(0).startswith(".") and _ABBREVIATION.search(text[start : match.start() + 1]):
            continue
        if piece.strip():
            yield piece.strip()
        start = match.end()
    if text[start:].strip():
        yield text[start:].strip()


_CLAUSE_SPLIT = re.compile(
    r",?\s+(?:and|but|so|because|although|though|while|plus)\s+(?=(?:i|i'm|i've|i'd|i'll|my|we|we're|our)\b)"
    r"|,\s+(?=(?:i|i'm|i've|i'd|i'll|we|we're|our)\b)|\s+[-–—]\s+",
    re.IGNORECASE,
)


_NOUN_PHRASE_ONLY = re.compile(r"(?:(?:my|our|the|his|her|their) )?[\w'-]+(?: [\w'-]+)?", re.IGNORECASE)


def _clauses(sentence: str) -> list[str]:
    """Split at clause boundaries ("..., and I ..."); never inside "my colleagues and I" or after "Note:"."""
    pieces: list[str] = []
    cursor = 0
    for boundary in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[cursor : boundary.start()].strip()
        joined_subject = boundary.group(0).strip(", ").casefold() == "and" and _NOUN_PHRASE_ONLY.fullmatch(
            left
        )
        if not left or joined_subject or _REQUEST_PREFIX_ONLY.fullmatch(left):
            continue
        pieces.append(left)
        cursor = boundary.end()
    pieces.append(sentence[cursor:].strip())
    return [piece for piece in pieces if piece]


def _looks_like_code_or_error(text: str) -> bool:
    if _CODE_OR_ERROR.search(text):
        return True
    symbols = sum(text.count(c) for c in "{}[]();=<>$\\|`")
    return len(text) > 20 and symbols / len(text) > 0.08


_TAG_QUESTION = re.compile(
    r"\b(?:shouldn't|should|isn't|aren't|don't|doesn't|won't|can't|couldn't|wouldn't|didn't|right|no)"
    r"(?: (?:i|you|we|it|they|he|she))?\s*[.!]*$",
    re.IGNORECASE,
)


def _is_question(sentence: str) -> bool:
    stripped = sentence.strip()
    if stripped.endswith("?") or _QUESTION_START.match(_DISCOURSE.sub("", stripped)):
        return True
    return bool(_TAG_QUESTION.search(stripped)) and "," not in stripped[-12:] and len(stripped.split()) > 3


def _strip_greeting(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _GREETING.sub("", text, count=1).strip()
    return text


# --- candidate helpers ------------------------------------------------------------------------


def _clean_value(value: str) -> str:
    value = value.strip(" ,.;:!?\"'")
    return re.sub(r"\s+", " ", value)


def _is_name(value: str) -> bool:
    tokens = [token.strip(".").casefold() for token in value.split()]
    return bool(tokens) and not any(
        token in _NOT_NAMES for token in tokens if token not in ("dr", "mr", "mrs")
    )


def _article(noun: str) -> str:
    return "an" if noun[:1].casefold() in "aeiou" else "a"


def _candidate(
    ctx: _Context,
    *,
    kind: MemoryKind,
    category: str,
    content: str,
    attribute: str | None = None,
    value: str | None = None,
    polarity: int = 1,
    event_time: datetime | None = None,
    entities: tuple[EntityMention, ...] = (),
    profile: ProfileSlot | None = None,
    confidence: float = 0.8,
    subject: str = "user",
) -> Candidate:
    return Candidate(
        kind=kind,
        content=_sentence(content),
        category=category,
        subject=subject,
        attribute=attribute,
        value=value,
        polarity=polarity,
        event_time=event_time,
        entities=entities,
        profile=profile,
        confidence=confidence,
        source_text=ctx.original,
    )


def _identity(
    ctx: _Context,
    attribute: str,
    value: str,
    content: str,
    *,
    entity: EntityType | None = None,
    confidence: float = 0.9,
) -> Candidate:
    return _candidate(
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


# --- identity rules ---------------------------------------------------------------------------

_I = r"(?:^|(?<=[\s,;:(]))(?i:i|we)"
_IM = r"(?:^|(?<=[\s,;:(]))(?i:i'm|i am)"

_NAME_RULES = (
    re.compile(rf"\bmy name(?: is|'s) (?P<v>{_NAME}){_END}", re.I),
    re.compile(rf"{_IM} called (?P<v>{_NAME}){_END}", re.I),
    re.compile(rf"^(?:please )?call me (?P<v>{_NAME}){_END}", re.I),
    re.compile(rf"{_I} go by (?P<v>{_NAME}){_END}", re.I),
    re.compile(rf"^(?:hi|hello|hey)?[,!]?\s*(?:i'm|i am|this is) (?P<v>{_CAP}){_END}", re.I),
)
_LOCATION_RULES = (
    re.compile(
        rf"{_I} (?:currently |now |still )?(?:live|am living|'m living|are living|reside|stay) in "
        rf"(?P<v>{_PLACE}|"
        rf"(?:a|an|the) [{_LOWER} ]{{2,40}}?(?:near|outside(?: of)?|close to|in) {_PLACE})",
        re.I,
    ),
    re.compile(
        rf"{_I} (?:just |recently |finally |have |'ve )?(?:moved|relocated) (?:back )?to (?P<v>{_PLACE})",
        re.I,
    ),
    re.compile(rf"{_IM} (?:currently |now )?(?:based|living|located|settled) in (?P<v>{_PLACE})", re.I),
    re.compile(rf"{_I} (?:currently )?work (?:remotely )?from (?P<v>{_PLACE})", re.I),
)
_ORIGIN = re.compile(rf"{_IM} (?:originally )?from (?P<v>{_PLACE})", re.I)
_EMPLOYER_RULES = (
    re.compile(rf"{_I} (?:currently |now |still )?work (?:at|for) (?P<v>{_ORG}){_END}", re.I),
    re.compile(rf"{_IM} (?:currently |now )?(?:employed|working) (?:at|by|for) (?P<v>{_ORG}){_END}", re.I),
    re.compile(
        rf"{_I} (?:just |recently )?(?:started|joined|got) (?:a |my )?(?:new )?(?:job|position|role)? ?"
        rf"(?:at|with) "
        rf"(?P<v>{_ORG}){_END}",
        re.I,
    ),
    re.compile(rf"{_I} (?:just |recently )?joined (?P<v>{_CAP}(?: {_CAP})*){_END}", re.I),
    re.compile(
        rf"{_IM} (?:currently |now )?(?:a|an) (?:[\w\-]+ ){{0,4}}?(?:{_OCCUPATIONS}) (?:at|for|with) "
        rf"(?P<v>{_ORG}){_END}",
        re.I,
    ),
)
_JOB = rf"(?P<v>(?:[{_LOWER}\-]+ ){{0,4}}(?:{_OCCUPATIONS})(?: (?:in|of) [{_LOWER}]+(?: [{_LOWER}]+)?)?)"
_JOB_RULES = (
    re.compile(rf"{_I} (?:currently |now )?work (?:at|for) .+? as (?:a|an) {_JOB}{_END}", re.I),
    re.compile(rf"{_IM} (?:currently |now )?(?:a|an) {_JOB}{_END}", re.I),
    re.compile(
        rf"{_I} (?:currently |now )?(?:work|am working|'m working|'ve been working|have been working) "
        rf"as (?:a|an) (?P<v>[\w\- ]{{2,50}}?){_END}",
        re.I,
    ),
    re.compile(
        rf"\bmy (?:job title|job|position|role|title) is (?:a |an )?(?P<v>[\w\- ]{{2,50}}?){_END}", re.I
    ),
)
_TIMEZONE_RULES = (
    re.compile(r"\bmy time ?zone is (?P<v>[A-Za-z]{2,5}(?:[+-]\d{1,2})?|[A-Z][\w/]+(?: time)?)", re.I),
    re.compile(
        r"(?:i'm|i am|we're|we are) (?:in|on) (?:the )?(?P<v>[A-Z][\w/]+|[A-Z]{2,5}) time ?zone", re.I
    ),
)
_LANGUAGE = re.compile(
    r"(?:^|(?<=\s))(?i:i|we) (?:also )?speak "
    r"(?P<v>[A-Z][a-z]+(?:(?:,| and| as well as)(?: a bit of| some| a little)? "
    r"[A-Z][a-z]+)*)",
)
_NATIVE_LANGUAGE = re.compile(r"\bmy (?:native|first|mother) (?:language|tongue) is (?P<v>[A-Z][a-z]+)", re.I)
_AGE = re.compile(
    rf"{_IM} (?P<v>\d{{1,3}}) (?:years old|yrs old|y/o|yo)\b|{_I} just turned (?P<w>\d{{1,3}})\b", re.I
)
_BIRTHDAY = re.compile(r"\bmy birthday is (?:on )?(?P<v>.+?)$", re.I)
_EMAIL = re.compile(r"\bmy (?:e-?mail|e-?mail address) is (?P<v>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)", re.I)
_PHONE = re.compile(r"\bmy (?:phone|cell|mobile)(?: number)? is (?P<v>\+?[\d ()\-]{6,20}\d)", re.I)
_NATIONALITY = re.compile(rf"{_IM} (?:a |an )?(?P<v>[A-Z][a-z\-]+)(?: citizen)?{_END}")
_ALLERGY = re.compile(rf"{_IM} (?:severely |very |mildly )?allergic to (?P<v>[\w\- ]+?){_END}", re.I)


def _month_day_text(phrase: str, at: datetime) -> str | None:
    mentions = find_dates(phrase, at)
    if not mentions or mentions[0].granularity not in ("day", "minute"):
        return None
    start = mentions[0].start
    return f"{start:%B} {start.day}"


def identity_rules(ctx: _Context) -> list[Candidate]:
    clause, subject, found = ctx.clause, ctx.subject, []
    for pattern in _NAME_RULES:
        match = pattern.search(clause)
        if match and _is_name(match.group("v")):
            value = _clean_value(match.group("v"))
            if value.casefold() in _NATIONALITIES or value.casefold() in _LANGUAGES:
                continue
            confidence = 0.75 if pattern is _NAME_RULES[-1] else 0.95
            found.append(
                _identity(
                    ctx, "name", value, f"The user's name is {value}", entity="person", confidence=confidence
                )
            )
            break
    for pattern in _LOCATION_RULES:
        match = pattern.search(clause)
        if match:
            value = _clean_value(match.group("v"))
            found.append(_identity(ctx, "location", value, f"{subject} lives in {value}", entity="place"))
            break
    match = _ORIGIN.search(clause)
    if match:
        value = _clean_value(match.group("v"))
        found.append(_identity(ctx, "origin", value, f"{subject} is originally from {value}", entity="place"))
    for pattern in _EMPLOYER_RULES:
        match = pattern.search(clause)
        if match and match.group("v").casefold() not in ("home", "the moment", "the weekend"):
            value = _clean_value(match.group("v"))
            found.append(
                _identity(ctx, "employer", value, f"{subject} works at {value}", entity="organization")
            )
            break
    for pattern in _JOB_RULES:
        match = pattern.search(clause)
        if match:
            value = _clean_value(match.group("v"))
            found.append(_identity(ctx, "job_title", value, f"{subject} works as {_article(value)} {value}"))
            break
    found.extend(_misc_identity(ctx))
    return found


def _misc_identity(ctx: _Context) -> list[Candidate]:
    clause, subject, found = ctx.clause, ctx.subject, []
    for pattern in _TIMEZONE_RULES:
        match = pattern.search(clause)
        if match:
            value = _clean_value(match.group("v"))
            found.append(_identity(ctx, "timezone", value, f"{subject}'s time zone is {value}"))
            break
    match = _LANGUAGE.search(clause) or _NATIVE_LANGUAGE.search(clause)
    if match and match.group("v").split()[0].casefold() in _LANGUAGES:
        value = _clean_value(match.group("v"))
        found.append(_identity(ctx, "language", value, f"{subject} speaks {value}"))
    match = _AGE.search(clause)
    if match:
        value = match.group("v") or match.group("w")
        found.append(_identity(ctx, "age", value, f"{subject} is {value} years old"))
    match = _BIRTHDAY.search(clause)
    if match:
        birthday = _month_day_text(match.group("v"), ctx.at)
        if birthday:
            found.append(_identity(ctx, "birthday", birthday, f"{subject}'s birthday is on {birthday}"))
    match = _EMAIL.search(clause)
    if match:
        found.append(
            _identity(ctx, "email", match.group("v"), f"{subject}'s email address is {match.group('v')}")
        )
    match = _PHONE.search(clause)
    if match:
        value = match.group("v").strip()
        found.append(_identity(ctx, "phone", value, f"{subject}'s phone number is {value}"))
    match = _NATIONALITY.search(clause)
    if match and match.group("v").casefold() in _NATIONALITIES:
        value = match.group("v")
        found.append(_identity(ctx, "nationality", value, f"{subject} is {value}"))
    match = _ALLERGY.search(clause)
    if match:
        value = _clean_value(match.group("v"))
        found.append(_identity(ctx, "allergy", value, f"{subject} is allergic to {value}"))
    return found


# --- relation rules ---------------------------------------------------------------------------

_MY = r"\b(?:my|our)"
_REL_NAMED = re.compile(rf"{_MY} {_REL}(?:'s)? name is (?P<v>{_NAME}){_END}", re.I)
_REL_IS = re.compile(rf"{_MY} {_REL} is (?:called |named )?(?P<v>{_NAME}){_END}", re.I)
_REL_IS_A_NAMED = re.compile(
    rf"{_MY} {_REL} is (?:a|an) [\w\- ]+? (?:named|called) (?P<v>{_NAME}){_END}", re.I
)
_REL_APPOSITION = re.compile(rf"{_MY} {_REL},? (?P<v>{_NAME})(?P<rest>,?.*)$", re.I)
_REL_INVERSE = re.compile(rf"^(?P<v>{_NAME}) is (?:my|our) {_REL}{_END}", re.I)
_REL_MARRIED = re.compile(rf"{_IM} married to (?P<v>{_NAME}){_END}", re.I)
_REL_HAVE_NAMED = re.compile(
    rf"{_I} (?:have|'ve got|got) (?:a|an|one) {_REL} (?:named|called) (?P<v>{_NAME}){_END}", re.I
)
_REL_GROUP = re.compile(
    rf"{_MY} (?P<rel>kids|children|sons|daughters|cats|dogs|parents) are (?:called |named )?"
    rf"(?P<v>{_NAME}(?:(?:,| and) {_NAME})+)",
    re.I,
)
_REL_BIRTHDAY = re.compile(rf"{_MY} {_REL}(?:'s)? birthday is (?:on )?(?P<v>.+?)$", re.I)


def _relation(ctx: _Context, rel_word: str, name: str, content: str, confidence: float = 0.85) -> Candidate:
    rel = _RELATIONS.get(rel_word.casefold(), rel_word.casefold().replace(" ", "_"))
    entity_type: EntityType = "other" if rel in _PETS else "person"
    return _candidate(
        ctx,
        kind=MemoryKind.FACT,
        category="relation",
        content=content,
        attribute=f"relation:{rel}",
        value=name,
        entities=(EntityMention(name, entity_type),),
        profile=ProfileSlot("relation", rel, name),
        confidence=confidence,
    )


def relation_rules(ctx: _Context) -> list[Candidate]:
    clause, possessive = ctx.clause, f"{ctx.subject}'s"
    match = _REL_BIRTHDAY.search(clause)
    if match:
        value = _month_day_text(match.group("v"), ctx.at)
        if value is None:
            return []
        rel = _RELATIONS.get(match.group("rel").casefold(), match.group("rel").casefold())
        return [
            _candidate(
                ctx,
                kind=MemoryKind.FACT,
                category="relation",
                content=f"{possessive} {match.group('rel').casefold()}'s birthday is on {value}",
                attribute=f"birthday:{rel}",
                value=value,
                confidence=0.85,
            )
        ]
    match = _REL_GROUP.search(clause)
    if match:
        value = _clean_value(match.group("v"))
        rel_word = match.group("rel").casefold()
        rel = {"kids": "children"}.get(rel_word, rel_word)
        return [
            _candidate(
                ctx,
                kind=MemoryKind.FACT,
                category="relation",
                content=f"{possessive} {rel_word} are {value}",
                attribute=f"relation:{rel}",
                value=value,
                entities=tuple(
                    EntityMention(n.strip(), "person") for n in re.split(r",| and ", value) if n.strip()
                ),
                confidence=0.8,
            )
        ]
    for pattern in (_REL_NAMED, _REL_IS, _REL_IS_A_NAMED, _REL_INVERSE, _REL_HAVE_NAMED):
        match = pattern.search(clause)
        if match and _is_name(match.group("v")):
            name = _clean_value(match.group("v"))
            rel_word = match.group("rel").casefold()
            return [_relation(ctx, rel_word, name, f"{possessive} {rel_word} is {name}", 0.9)]
    match = _REL_MARRIED.search(clause)
    if match and _is_name(match.group("v")):
        name = _clean_value(match.group("v"))
        return [_relation(ctx, "spouse", name, f"{ctx.subject} is married to {name}", 0.9)]
    match = _REL_APPOSITION.search(clause)
    if match and _is_name(match.group("v")):
        name = _clean_value(match.group("v"))
        rel_word = match.group("rel").casefold()
        return [_relation(ctx, rel_word, name, f"{possessive} {rel_word} is {name}")]
    return []


# --- preference rules -------------------------------------------------------------------------

_LIKE_VERBS = {
    "love": 1,
    "adore": 1,
    "like": 1,
    "enjoy": 1,
    "prefer": 1,
    "hate": -1,
    "dislike": -1,
    "detest": -1,
    "despise": -1,
    "loathe": -1,
    "can't stand": -1,
    "cannot stand": -1,
    "can't bear": -1,
    "don't like": -1,
    "do not like": -1,
    "don't enjoy": -1,
    "don't love": -1,
    "really don't like": -1,
}
_LIKE = re.compile(
    rf"(?:^|(?<=[\s,;:]))i (?:(?:{_ADVERBS}|kind of|kinda|sort of|tend to|do) )*"
    rf"(?P<verb>{'|'.join(sorted(map(re.escape, _LIKE_VERBS), key=len, reverse=True))})s? (?P<v>.+)$",
    re.I,
)
_FAN = re.compile(
    r"(?:^(?:i'm |i am )?|(?<=[\s,;:])(?:i'm|i am) )(?P<neg>not )?(?:really |such )?(?:a |much of a )?"
    r"(?:big |huge |massive )?fan of (?P<v>.+)$",
    re.I,
)
_WOULD_RATHER = re.compile(r"(?:^|(?<=[\s,;:]))i(?:'d| would) (?:rather|prefer) (?P<v>.+)$", re.I)
_STANDING_WANT = re.compile(
    r"(?:^|(?<=[\s,;:]))i(?:'d| would)? (?:like|want|need) (?P<v>.+?) "
    r"(?:from now on|going forward|in (?:the )?future"
    r"|every time|always)\b",
    re.I,
)
_OVER_FOR_ME = re.compile(r"^(?P<v>[\w\- ]{2,30}) over (?P<w>[\w\- ]{2,30}) for me\b", re.I)
_HABIT = re.compile(
    rf"(?:^|(?<=[\s,;:]))i (?P<adv>usually|always|never|normally|typically|generally) "
    rf"(?P<verb>[{_LOWER}]+)(?P<rest>.*)$",
    re.I,
)
_FAVORITE = re.compile(
    r"\bmy (?:all-time )?favou?rite (?P<what>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<v>[^,.;!?]+)", re.I
)
_FAVORITE_INVERSE = re.compile(
    r"^(?P<v>[\w\- ]{2,40}?) (?:is|are) (?:my|definitely my|probably my) (?:all-time )?favou?rite "
    r"(?P<what>[a-z]+(?: [a-z]+)?)\b",
    re.I,
)
_DIET = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:i'm|i am) (?:a |an )?(?:strict )?"
    r"(?P<v>vegetarian|vegan|pescatarian|pescetarian)\b",
    re.I,
)
_NO_EAT = re.compile(
    r"(?:^|(?<=[\s,;:]))i (?:don't|do not|never|can't|cannot) (?:eat|drink) "
    r"(?P<v>[\w\- ]+?)(?=$|[,.;!]| anymore| at all)",
    re.I,
)
_CONTACT_TIME = re.compile(
    r"\b(?:the )?best (?:time|way) to (?:reach|contact|call|get hold of) me is (?P<v>[^,.;!?]+)", re.I
)
_INSTRUCTION = re.compile(
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
_WHEN_YOU = re.compile(
    rf"^when(?:ever)? you (?P<cond>(?:{_OUTPUT_VERBS})\b[^,]*), (?:please )?(?:always )?"
    rf"(?P<v>(?:{_OUTPUT_VERBS}|"
    rf"keep|avoid|don't|do not|never|make)\b.+)$",
    re.I,
)
_KEEP_IT = re.compile(
    r"^(?:please )?keep (?:your|the|all) (?:answers|replies|responses|explanations|messages|summaries)"
    r" (?P<v>short|brief|concise|succinct|tight|long|detailed)\b",
    re.I,
)
_BLOCKED_OBJECT = re.compile(
    r"^(?:(?:that|this|these|those|how|what|which|if|whether|your|yours|you|it(?! when)|them|their|his|her|"
    r"the idea|"
    r"the way|the fact|the thought|all the|the look|the colou?rs?|the vibe|the design|the pic|the photo|"
    r"the picture|the painting|the energy|is|was|are|were|makes|made|has|keeps|gives|helps|means|"
    r"the sound of that|hearing (?:that|about)|seeing (?:that|this|your)|"
    r"to (?:ask|know|see|hear|say|think|check|point out|mention|add|clarify|confirm|understand|learn more|"
    r"thank|share|get your))\b|_)",
    re.I,
)


def _topic(text: str, polarity: int) -> tuple[str, str] | None:
    """A known preference slot in `text` ("short answers" -> ("preference:answer_length", "short"))."""
    low = text.casefold()
    if re.search(
        r"\b(?:answers?|repl(?:y|ies)|responses?|explanations?|messages?|summar(?:y|ies)|them)\b", low
    ):
        short = re.search(r"\b(?:short|shorter|brief|concise|succinct|terse|tight|to the point)\b", low)
        long_ = re.search(r"\b(?:long|longer|detailed|in-depth|thorough|lengthy|comprehensive)\b", low)
        if short or long_:
            value = "short" if (short and not long_) == (polarity > 0) else "long"
            return "preference:answer_length", value
    method = re.search(
        r"\b(e-?mail|phone(?: calls?)?|calls?|texts?|sms|whatsapp|slack|telegram|signal)\b", low
    )
    if (
        method
        and re.search(r"\b(?:over|to|rather than|instead of|by|via|through)\b|contact", low)
        and polarity > 0
    ):
        value = method.group(1).replace("e-mail", "email")
        value = {"calls": "phone", "call": "phone", "phone calls": "phone", "phone call": "phone"}.get(
            value, value
        )
        return "preference:contact_method", value.rstrip("s") if value in ("texts",) else value
    language = re.search(r"\bin (" + "|".join(_LANGUAGES) + r")\b", low)
    if language and re.search(
        r"\b(?:reply|replies|respond|answer|write|speak|talk|responses|answers)\b", low
    ):
        return "preference:response_language", language.group(1).capitalize()
    for attribute, pattern in (
        ("preference:units", r"\b(metric|imperial)\b"),
        ("preference:theme", r"\b(dark|light) (?:mode|theme)\b"),
        ("preference:tone", r"\b(informal(?:ly)?|formal(?:ly)?|casual(?:ly)?)\b"),
        ("preference:format", r"\b(bullet points?|tables?|prose|markdown|numbered lists?|plain text)\b"),
    ):
        found = re.search(pattern, low)
        if found and polarity > 0:
            return attribute, found.group(1).removesuffix("ly")
    if re.search(r"\bemojis?\b", low):
        return "preference:emojis", "yes" if polarity > 0 else "no"
    return None


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


def _preference(
    ctx: _Context,
    content: str,
    *,
    attribute: str | None,
    value: str | None,
    polarity: int = 1,
    confidence: float = 0.85,
) -> Candidate:
    key = _PROFILE_KEYS.get(attribute or "")
    if key is None and attribute and attribute.startswith("preference:favorite_"):
        key = attribute.removeprefix("preference:")
    return _candidate(
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


def _object(text: str) -> str:
    """The liked/disliked thing: cut at the first clause boundary."""
    cut = re.split(r"[,;.!?()]| but | because | since | especially | although | though ", text, maxsplit=1)[0]
    return _clean_value(cut)


def _topic_content(ctx: _Context, attribute: str, value: str) -> str:
    subject = ctx.subject
    templates = {
        "preference:answer_length": f"{subject} prefers {value} answers",
        "preference:contact_method": f"{subject} prefers to be contacted by {value}",
        "preference:response_language": f"{subject} wants replies in {value}",
        "preference:units": f"{subject} prefers {value} units",
        "preference:theme": f"{subject} prefers {value} mode",
        "preference:tone": f"{subject} prefers to be addressed in {_article(value)} {value} tone",
        "preference:format": f"{subject} prefers answers formatted as {value}",
        "preference:emojis": f"{subject} {'likes' if value == 'yes' else 'does not want'} emojis in answers",
    }
    return templates.get(attribute, f"{subject} prefers {value}")


def preference_rules(ctx: _Context) -> list[Candidate]:
    clause, subject = ctx.clause, ctx.subject
    for pattern, builder in (
        (_KEEP_IT, _keep_it),
        (_CONTACT_TIME, _contact_time),
        (_FAVORITE, _favorite),
        (_FAVORITE_INVERSE, _favorite),
        (_DIET, _diet),
        (_NO_EAT, _no_eat),
        (_INSTRUCTION, _instruction),
        (_WHEN_YOU, _when_you),
        (_WOULD_RATHER, _would_rather),
        (_STANDING_WANT, _standing_want),
        (_OVER_FOR_ME, _over_for_me),
        (_FAN, _fan),
        (_LIKE, _like),
        (_HABIT, _habit),
    ):
        match = pattern.search(clause)
        if match:
            candidate = builder(ctx, match)
            if candidate is not None:
                return [candidate]
    del subject
    return []


def _keep_it(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    value = "long" if match.group("v").casefold() in ("long", "detailed") else "short"
    attribute = "preference:answer_length"
    return _preference(ctx, _topic_content(ctx, attribute, value), attribute=attribute, value=value)


def _contact_time(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    value = _clean_value(match.group("v"))
    content = f"The best time to reach {ctx.subject} is {value}"
    return _preference(ctx, content, attribute="preference:contact_time", value=value)


def _favorite(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    what, value = match.group("what").casefold(), _clean_value(match.group("v"))
    if what.split()[0] in ("part", "thing", "bit", "one", "answer", "example") or _BLOCKED_OBJECT.match(
        value
    ):
        return None
    attribute = f"preference:favorite_{what.replace(' ', '_')}"
    return _preference(ctx, f"{ctx.subject}'s favorite {what} is {value}", attribute=attribute, value=value)


def _diet(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    value = match.group("v").casefold()
    return _preference(ctx, f"{ctx.subject} is {value}", attribute="diet", value=value)


def _no_eat(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    value = _clean_value(match.group("v"))
    content = third_person(ctx.original[match.start() :], ctx.name)
    return _preference(ctx, content, attribute="diet", value=f"no {value}", confidence=0.8)


def _instruction(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    instruction = ctx.original[match.start() :]
    polarity = -1 if match.group("adv").casefold().startswith(("never", "don't", "do not")) else 1
    topic = _topic(match.group("v"), polarity)
    if topic:
        return _preference(ctx, _topic_content(ctx, *topic), attribute=topic[0], value=topic[1])
    text = _sentence(re.sub(r"^please\s+", "", instruction, flags=re.I))
    rendered = re.sub(
        r"\bme\b", ctx.subject, re.sub(r"\bmy\b", f"{ctx.subject}'s", text, flags=re.I), flags=re.I
    )
    return _preference(
        ctx, f"Standing instruction from {ctx.subject}: {rendered}", attribute=None, value=None
    )


def _when_you(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    text = _sentence(ctx.original[match.start() :])
    rendered = re.sub(r"\bme\b", ctx.subject, text, flags=re.I)
    return _preference(
        ctx, f"Standing instruction from {ctx.subject}: {rendered}", attribute=None, value=None
    )


def _would_rather(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    whole = match.group("v")
    if _BLOCKED_OBJECT.match(whole) or whole.casefold().startswith(("not ", "to know", "to ask")):
        return None
    topic = _topic(whole, 1)
    if topic:
        return _preference(ctx, _topic_content(ctx, *topic), attribute=topic[0], value=topic[1])
    value = _object(whole)
    return _preference(
        ctx, f"{ctx.subject} would rather {value}", attribute="likes", value=value, confidence=0.75
    )


def _standing_want(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    whole = match.group("v")
    if _BLOCKED_OBJECT.match(whole):
        return None
    topic = _topic(whole, 1)
    if topic:
        return _preference(ctx, _topic_content(ctx, *topic), attribute=topic[0], value=topic[1])
    value = _object(whole)
    return _preference(
        ctx, f"{ctx.subject} wants {value} from now on", attribute=None, value=value, confidence=0.75
    )


def _over_for_me(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    value, other = _clean_value(match.group("v")), _clean_value(match.group("w"))
    return _preference(
        ctx, f"{ctx.subject} prefers {value} over {other}", attribute="likes", value=value, confidence=0.75
    )


def _fan(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    if _BLOCKED_OBJECT.match(match.group("v")):
        return None
    value = _object(match.group("v"))
    if not value:
        return None
    polarity = -1 if match.group("neg") else 1
    verb = "is not a fan of" if polarity < 0 else "is a fan of"
    return _preference(
        ctx, f"{ctx.subject} {verb} {value}", attribute="likes", value=value, polarity=polarity
    )


_PRONOUN = re.compile(r"^(?:\S+ ){0,2}?(?:it|them|this|that|these|those|him|her|one|ones)\b", re.I)


def _unresolved_referent(text: str) -> bool:
    """True when the object leans on context we do not have ("seeing them", "making it")."""
    return bool(_PRONOUN.match(text.strip()))


def _like(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    verb = match.group("verb").casefold()
    whole = match.group("v")
    if _BLOCKED_OBJECT.match(whole) or _unresolved_referent(whole):
        return None
    polarity = _LIKE_VERBS[verb]
    topic = _topic(whole, polarity)
    if topic:
        return _preference(ctx, _topic_content(ctx, *topic), attribute=topic[0], value=topic[1])
    value = _object(whole)
    if not value or len(value.split()) > 10:
        return None
    value = re.sub(r"^(?:it )?when\b", "when", value)
    start = match.start()
    phrase = ctx.original[start : match.start("v")] + value
    content = third_person(phrase, ctx.name)
    if verb == "prefer":
        return _preference(ctx, content, attribute="likes", value=value, confidence=0.8)
    return _preference(ctx, content, attribute="likes", value=value, polarity=polarity)


_NOT_HABITS = _wordset(
    """said say meant mean asked ask told tell thought think knew know understood understand forget forgot
    wondered wonder get got do did have had am feel felt feels wish hope try tried want wanted"""
)


def _habit(ctx: _Context, match: re.Match[str]) -> Candidate | None:
    rest = match.group("rest").strip()
    if match.group("verb").casefold() in _NOT_HABITS or rest.startswith("'") or _BLOCKED_OBJECT.match(rest):
        return None
    text = ctx.original[match.start() :]
    topic = _topic(text, -1 if match.group("adv").casefold() == "never" else 1)
    if topic:
        return _preference(ctx, _topic_content(ctx, *topic), attribute=topic[0], value=topic[1])
    return _preference(
        ctx,
        third_person(text, ctx.name),
        attribute="habit",
        value=_object(match.group("rest")),
        confidence=0.7,
    )


# --- open items and requests ------------------------------------------------------------------

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
            r"|'m going to have to)\s+(?:really\s+|still\s+|definitely\s+)?(?:remember to\s+)?"
            r"(?P<v>[a-z].+)$",
            re.I,
        ),
    ),
)
_NOT_TASKS = re.compile(
    r"^(?:understand|know|learn|think|ask|see|say|admit|be honest|go\b|run\b|leave|sleep|figure out how|"
    r"find out (?:how|what|why)|check (?:if|whether)|clarify|confirm|point out|mention|apologi[sz]e|thank|"
    r"get going|head out|log off|sign off|wrap up|be careful|do (?:the same|that|it|this|so|something)\b|do$|"
    r"keep (?:going|it up|at it)|hear|try it|give up)",
    re.I,
)


_EMBEDDED = re.compile(
    r"\b(?:what|which|that|who|whom|thought|think|guess|guessed|figured|know|knew|feel|felt|wish|hope|if|when)\s*$",
    re.I,
)


def open_item_rules(ctx: _Context) -> list[Candidate]:
    clause, subject = ctx.clause, ctx.subject
    for kind, pattern in _OPEN_ITEM_RULES:
        match = pattern.search(clause)
        if not match:
            continue
        item = match.group("v")
        if _EMBEDDED.search(clause[: match.start()]):
            return []
        if (
            _NOT_TASKS.match(item)
            or _unresolved_referent(item)
            or re.match(r"^(?:what|how|why|who|where|when|which)\b", item, re.I)
        ):
            return []
        original_item = ctx.original[match.start("v") : match.end("v")]
        full = ctx.original[match.start() : match.end()]
        mentions = find_dates(full, ctx.at, prefer="future")
        event_time = mentions[0].start if mentions else None
        body = _absolute_dates(original_item, find_dates(original_item, ctx.at, prefer="future"))
        when = match.groupdict().get("when") or ""
        when_mentions = find_dates(when, ctx.at, prefer="future") if when.strip() else []
        suffix = f" on {_render_date(when_mentions[0])}" if when_mentions else ""
        body = _third_person_object(body, ctx.name)
        content = {
            "remind": f"{subject} wants to be reminded to {body}{suffix}",
            "remind_about": f"{subject} wants to be reminded about {body}",
            "forget": f"{subject} wants to be reminded to {body}",
            "follow": f"{subject} wants to follow up {body}",
            "todo": f"{subject} has a to-do: {body}",
        }.get(kind)
        if content is None:
            modal = match.group("modal").strip().casefold().replace("'m supposed", "is supposed")
            modal = {
                "have to": "has to",
                "'ve got to": "has to",
                "have got to": "has to",
                "got to": "has to",
                "gotta": "has to",
                "am supposed to": "is supposed to",
                "still have to": "still has to",
                "need to": "needs to",
                "'m going to have to": "will have to",
            }.get(modal, modal)
            content = f"{subject} {modal} {body}"
        return [
            _candidate(
                ctx,
                kind=MemoryKind.TASK,
                category="open_item",
                content=content,
                attribute="task",
                value=_clean_value(original_item),
                event_time=event_time,
                confidence=0.85,
            )
        ]
    return []


def _third_person_object(text: str, name: str | None) -> str:
    """Pronouns inside a task body that follows the subject ("call my mom" -> "call their mom")."""
    text = re.sub(r"\bmy\b|\bour\b", "their", text, flags=re.I)
    text = re.sub(r"\bme\b|\bus\b", "them", text, flags=re.I)
    text = re.sub(r"\bmyself\b", "themselves", text, flags=re.I)
    text = re.sub(r"\bI\b", name or "the user", text)
    return re.sub(r"[.!?]+$", "", text.strip())


_REQUEST = re.compile(
    r"^(?:please )?(?:remember(?! to\b| when\b| what\b| how\b| who\b| where\b| the time\b)(?: that)?"
    r"|(?:make a |take a |take )?note(?: down)?(?: that)?|keep in mind(?: that)?|bear in mind(?: that)?"
    r"|(?:don't|do not) forget(?! to\b)(?: that)?|for (?:future|your) reference|for the record"
    r"|just so you know"
    r"|fyi|(?:please )?save this|store this|write (?:this|that) down|jot (?:this|that) down)"
    r"\s*[:,\-]?\s+(?P<v>\S.*)$",
    re.I,
)


_STATEMENT_START = re.compile(
    rf"(?:i|i'm|i've|i'd|i'll|my|we|we're|our|the|a|an|this|that|these|those|there|it|it's|his|her|their|he|"
    rf"she|they|everyone|everything|all|no|every|each|some)\b|(?-i:[{_UPPER}])(?![\w.]*,)|\d",
    re.IGNORECASE,
)


def request_rules(ctx: _Context, inner: Callable[[_Context], list[Candidate]]) -> list[Candidate] | None:
    """An explicit "remember/note that X": X's own candidates when rules find some, else a note."""
    match = _REQUEST.search(ctx.clause)
    if not match:
        return None
    start = match.start("v")
    if not _STATEMENT_START.match(ctx.clause[start:]):
        return []  # "Don't forget, believe in yourself": advice, not something to remember
    body_ctx = replace(ctx, clause=ctx.clause[start:], original=ctx.original[start:])
    structured = [c for c in inner(body_ctx) if c.category in ("identity", "relation", "preference")]
    if structured:
        return [replace(c, confidence=max(c.confidence, 0.95), source_text=ctx.original) for c in structured]
    body = ctx.original[start:]
    mentions = find_dates(body, ctx.at, prefer=guess_tense(body))
    content = third_person(body, ctx.name)
    return [
        _candidate(
            ctx,
            kind=MemoryKind.NOTE,
            category="request",
            content=content,
            attribute="note",
            value=_clean_value(body),
            event_time=mentions[0].start if mentions else None,
            confidence=0.95,
        )
    ]


# --- events -----------------------------------------------------------------------------------

_DEADLINE_BEFORE = re.compile(r"\b(?:by|before|until|till|for|due)\s*$", re.I)
_STATE_ONLY = re.compile(
    r"^(?:i'm|i am)\s+(?:(?:a bit|so|very|really|quite|pretty|too|kind of)\s+)*[a-z]+"
    r"(?:\s+(?:for|today|tonight|now))",
    re.I,
)


def event_rules(ctx: _Context) -> list[Candidate]:
    clause = ctx.clause
    if not _EVENT_CUE.search(clause) or _STATE_ONLY.match(clause):
        return []
    has_event_noun = re.search(rf"\b(?:{_EVENT_NOUNS})s?\b", clause, re.I)
    if not (_PERSONAL.search(clause) or has_event_noun):
        return []
    prefer: Prefer | None = guess_tense(clause)
    mentions = [
        m
        for m in find_dates(ctx.original, ctx.at, prefer=prefer)
        if not _DEADLINE_BEFORE.search(ctx.original[: m.span[0]])
    ]
    if not mentions:
        return []
    first = mentions[0]
    if first.span[0] == 0 and re.match(
        r"\s+(?:was|has|had|has been|had been)\b", ctx.original[first.span[1] :]
    ):
        return []  # the date is the grammatical subject ("This week has been busy"): not an event
    text = _absolute_dates(ctx.original, mentions)
    leading = re.match(
        r"^(?:today|tonight|tomorrow|yesterday|the day after tomorrow) is (?P<rest>.+)$", ctx.original, re.I
    )
    if leading and first.span[0] == 0:
        rest = re.sub(r"[.!?]+$", "", leading.group("rest"))
        text = f"{rest} is on {_render_date(first)}"
    if re.match(rf"^[{_UPPER}][{_LOWER}]+ing\b", text):
        text = f"I'm {text[0].lower()}{text[1:]}"
    elif re.match(
        rf"^(?:[{_UPPER}][{_LOWER}]+ed|Took|Went|Had|Got|Made|Saw|Met|Ran|Spent|Bought|Found|Came|Was|Did)\b",
        text,
    ):
        text = f"I {text[0].lower()}{text[1:]}"
    content = third_person(text, ctx.name)
    return [
        _candidate(
            ctx,
            kind=MemoryKind.EVENT,
            category="event",
            content=content,
            attribute="event",
            value=_clean_value(ctx.original),
            event_time=mentions[0].start,
            entities=_capitalized_entities(ctx.clause),
            confidence=0.7,
        )
    ]


_PLACE_CUE = re.compile(rf"\b(?:to|in|from|at|near|visit|visiting) (?P<v>{_PLACE})")


def _capitalized_entities(clause: str) -> tuple[EntityMention, ...]:
    found: list[EntityMention] = []
    for match in _PLACE_CUE.finditer(clause):
        value = match.group("v")
        first = value.split()[0].casefold()
        if first not in _NOT_NAMES:
            found.append(EntityMention(value, "place"))
    return tuple(found)


# --- the extractor ----------------------------------------------------------------------------


class RuleExtractor:
    """Offline `Extractor`: regular-expression rules over user messages.

    Assistant and system messages are skipped unless `include_assistant=True` (then an assistant
    message is read only for explicit "remember"/"note" requests, never for facts).
    """

    def __init__(self, *, include_assistant: bool = False) -> None:
        self.include_assistant = include_assistant

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        found: list[Candidate] = []
        name = known_name
        for message in messages:
            if message.role != "user":
                continue
            speaker = message.speaker or name
            for candidate in self.extract_text(message.content, at=message.at, name=speaker):
                found.append(candidate)
                if candidate.attribute == "name" and candidate.category == "identity" and not message.speaker:
                    name = candidate.value
        return _dedupe(found)

    def extract_text(self, text: str, *, at: datetime, name: str | None = None) -> list[Candidate]:
        """Candidates from one user message's text."""
        normalized = _normalize(text.replace("\r", ""))
        if not normalized or _looks_like_code_or_error(text):
            return []
        masked = _mask_quotes(normalized)
        found: list[Candidate] = []
        for sentence_masked, sentence in _aligned_sentences(masked, normalized):
            for clause_masked, clause in _aligned_clauses(sentence_masked, sentence):
                ctx = _Context(clause=clause_masked, original=clause, at=at, name=name)
                produced = _clause_candidates(ctx)
                found.extend(produced)
                for candidate in produced:
                    if candidate.attribute == "name" and candidate.category == "identity" and name is None:
                        name = candidate.value
        return found


def _aligned_sentences(masked: str, original: str) -> Iterator[tuple[str, str]]:
    """Sentences of the masked text with the matching slices of the original text."""
    cursor = 0
    for sentence in _sentences(masked):
        start = masked.index(sentence, cursor)
        end = start + len(sentence)
        cursor = end
        question = _is_question(sentence) and not _QUESTION_REQUEST.match(_DISCOURSE.sub("", sentence))
        if question or _HYPOTHETICAL.search(sentence) or _REPORTED.search(sentence):
            continue
        yield sentence, original[start:end]


def _aligned_clauses(masked: str, original: str) -> Iterator[tuple[str, str]]:
    cursor = 0
    for clause in _clauses(masked):
        start = masked.index(clause, cursor)
        end = start + len(clause)
        cursor = end
        stripped = _strip_greeting(clause)
        offset = len(clause) - len(stripped)
        lead = _DISCOURSE.match(stripped)
        if lead:
            offset += lead.end()
        body_masked = clause[offset:].strip()
        if not body_masked:
            continue
        body_start = masked.index(body_masked, start)
        body_original = original[body_start : body_start + len(body_masked)]
        question_lead = _QUESTION_REQUEST.match(body_masked)
        if question_lead:
            body_masked = body_masked[question_lead.end() :].rstrip("?").strip()
            body_original = body_original[question_lead.end() :].rstrip("?").strip()
        yield body_masked, body_original


def _clause_candidates(ctx: _Context) -> list[Candidate]:
    requested = request_rules(ctx, _statement_candidates)
    if requested is not None:
        return requested
    tasks = open_item_rules(ctx)
    if tasks:
        return tasks
    return _statement_candidates(ctx)


def _statement_candidates(ctx: _Context) -> list[Candidate]:
    found = identity_rules(ctx) + relation_rules(ctx) + preference_rules(ctx)
    blocking = [c for c in found if c.category != "relation" or (c.attribute or "").startswith("birthday:")]
    if not blocking:
        found.extend(event_rules(ctx))
    return found


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str | None, str | None, str]] = set()
    unique = []
    for candidate in candidates:
        key = (candidate.category, candidate.attribute, (candidate.value or "").casefold(), candidate.content)
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique


__all__ = ["RuleExtractor", "third_person"]
