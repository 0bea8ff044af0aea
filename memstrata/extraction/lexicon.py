"""Word lists and regular-expression building blocks shared by the extraction rules.

Fragments (`NAME`, `PLACE`, `ORG`, `END`...) are pattern source text, meant to be embedded in
larger patterns compiled with `re.I`; each fragment switches case sensitivity off where a capital
letter matters (`CAP`). Nothing here matches a whole statement: that is the rules' job.
"""

from __future__ import annotations

import re


def wordset(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`."""
    return frozenset(text.split())


def aliases(spec: str) -> dict[str, str]:
    """Parse "canonical: alias alias" lines (bare words map to themselves; "_" in an alias is a space)."""
    table: dict[str, str] = {}
    for line in spec.splitlines():
        canonical, _, names = line.strip().rpartition(":")
        for word in names.split():
            table[word.replace("_", " ")] = canonical.strip() or word
        if canonical:
            table[canonical.strip().replace("_", " ")] = canonical.strip()
    return table


# --- names, places, organizations -------------------------------------------------------------

UPPER = "A-ZÀ-ÖØ-Þ"
LOWER = "a-zß-öø-ÿ"
CAP = rf"(?-i:(?!I\b)[{UPPER}](?:[{LOWER}{UPPER}\-]|'(?=[{UPPER}]))*)"
"""One capitalized word (never the pronoun "I"), case-sensitive even inside an `re.I` pattern."""
_CAP_POSSESSIVE = rf"{CAP}(?:'s)?"
NAME = rf"(?:(?-i:Dr|Mr|Mrs|Ms|Prof)\.? )?{CAP}(?: {CAP})?"
PLACE = (
    rf"(?:St\. )?{CAP}(?:(?: |-)(?:(?:de|del|da|do|upon|on|am|sur|la|le|of) )?{CAP})*"
    rf"(?:, {CAP}(?: {CAP})*)?"
)
ORG = (
    rf"(?:St\. )?{_CAP_POSSESSIVE}(?:(?: | & | of )(?:St\. )?{_CAP_POSSESSIVE})*"
    rf"|(?:the|a|an) [{LOWER}][{LOWER}\-]*(?: [{LOWER}][{LOWER}\-]*){{0,3}}?"
)
END = (
    r"(?=\s*(?:$|[,.;!?)]|\s(?:now|not|and|but|by the way|btw|here|originally|as|with|since|for|in|at|on|too"
    r"|though"
    r"|anymore|last|next|this|yesterday|today|tomorrow|from|after|before|until|so|because|who|which|lol|haha)\b))"
)
"""Where a captured value may stop: punctuation, the end, or a word that starts a new phrase."""

I_OR_WE = r"(?:^|(?<=[\s,;:(]))(?i:i|we)"
I_AM = r"(?:^|(?<=[\s,;:(]))(?i:i'm|i am)"
MY_OR_OUR = r"\b(?:my|our)"

ADVERBS = (
    "really|just|also|usually|always|never|still|often|sometimes|absolutely|totally|truly|honestly|actually|"
    "definitely|generally|normally|typically|mostly|now|currently|recently|finally|already|only|even|barely|rarely|"
    "hardly|seldom|occasionally|literally|basically|constantly|regularly|mainly|primarily|personally|officially|"
    "no longer"
)

# --- word lists -------------------------------------------------------------------------------

NOT_NAMES = wordset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december the a an this that it he she they we you i my your our
    his her their not just so sure ok okay fine good great sorry ready done here back also still very
    going trying looking working glad happy tired new old mr mrs ms dr prof"""
)

NATIONALITIES = wordset(
    """american british english scottish welsh irish canadian mexican brazilian argentinian chilean
    colombian peruvian german french italian spanish portuguese dutch belgian swiss austrian swedish
    norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish
    russian ukrainian serbian croatian slovenian estonian latvian lithuanian israeli egyptian moroccan
    nigerian kenyan ghanaian ethiopian south-african indian pakistani bangladeshi chinese japanese
    korean vietnamese thai filipino indonesian malaysian singaporean australian kiwi iranian iraqi
    lebanese syrian saudi"""
)

LANGUAGES = wordset(
    """english spanish german french italian portuguese dutch swedish norwegian danish finnish polish czech
    russian ukrainian greek turkish arabic hebrew hindi urdu bengali chinese mandarin cantonese japanese
    korean vietnamese thai indonesian swahili"""
)

OCCUPATIONS = (
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
    "apprentice|contractor|assistant|representative|planner|producer|scientist|sysadmin|devops|tester|"
    "journalist|hygienist|receptionist|cartoonist|pianist|guitarist|violinist|novelist|florist|stylist|"
    "anesthetist|optometrist|orthodontist|podiatrist|physiotherapist|paramedic|dietitian|radiographer|"
    "[a-z]+ologist|[a-z]+iatrist|[a-z]+iatrician|[a-z]+ician"
)

RELATIONS = aliases(
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
"""Relation word (as written) -> canonical relation ("mum" -> "mother", "best friend" -> "best_friend")."""
PETS = frozenset({"cat", "dog", "pet"})
REL = "(?P<rel>" + "|".join(sorted((re.escape(k) for k in RELATIONS), key=len, reverse=True)) + ")"

# --- events -----------------------------------------------------------------------------------

EVENT_NOUNS = (
    r"appointment|interview|meeting|party|wedding|conference|offsite|off-site|presentation|surgery|"
    r"operation|exam|test|flight|trip|vacation|holiday|concert|birthday|anniversary|day off|first day|"
    r"deadline|ceremony|graduation|funeral|reunion|recital|match|game|race|marathon|checkup|check-up|"
    r"dinner|lunch|date|launch|release|demo|review|visit|move|festival|show|class|course|workshop"
)
EVENT_CUE = re.compile(
    rf"\b(?:{EVENT_NOUNS})s?\b"
    r"|\b(?:i'?m|i am|we'?re|we are|is|are|am|'s)\s+(?:\w+ly\s+)?\w+ing\b"
    r"|\b(?:i|we|he|she|they)\s+(?:just\s+|finally\s+|already\s+|also\s+)?"
    r"(?:[a-z]+ed|went|ran|had|got|took|made|saw|met|came|left|began|won|lost|bought|sold|flew|drove|"
    r"wrote|gave|did|quit|became|broke|found|spent)\b"
    r"|\b(?:'ll|will)\s+be\b|\b(?:i|we)\s+(?:'ll|will)\s+\w+"
    r"|\b(?:starts?|begins?|ends?|finish(?:es)?|graduates?|arrives?|leaves?|lands?|opens?|closes?|turns?|retires?"
    r"|moves?|comes? back|gets? back)\b",
    re.IGNORECASE,
)
"""Something happens: an event noun, a progressive, a past-tense action, a future "will", or a scheduled
start or end in the present tense ("my son starts kindergarten in September")."""
PERSONAL = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|us)\b", re.IGNORECASE)


def is_name(value: str) -> bool:
    """True when no word of `value` is a weekday, month, pronoun or other word that is never a name."""
    tokens = [token.strip(".").casefold() for token in value.split()]
    return bool(tokens) and not any(token in NOT_NAMES for token in tokens if token not in ("dr", "mr", "mrs"))


CO_SUBJECT = re.compile(r"(?:\b(?-i:[A-Z])[a-z]+|\b(?:my|our) [a-z]+) and $", re.IGNORECASE)
"""Someone who does it with the speaker, just before their "I" ("Rachel and I ...", "my wife and I ...")."""
