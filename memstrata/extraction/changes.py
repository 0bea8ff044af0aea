"""A restated value of one attribute retires the older value (pure, no I/O).

"we moved the launch to May" replaces "the launch is on April 10"; "my new number is 555-9876" replaces
"my number is 555-1234"; "the meeting is now on Friday" replaces "the meeting is on Thursday"; "actually
it's 3pm not 2pm" replaces "the call is at 2pm". Three readings, tried in turn:

- **A changed subject** (`_CHANGES`): the newer sentence names a *subject* (the thing whose attribute
  changed: "the launch", "my number", "mom's dinner") and a new *value*, with an update cue: a verb of
  change ("moved", "pushed", "rescheduled", "changed", "went up", "increased", ... in the past or in -ing,
  with or without "was"/"got"/"has been", "from X" allowed: "... to", "until", "for"), "new"/"current"/
  "latest" before the subject, "now", "actually", "instead", "no longer X, it's Y", or "X not Y". The
  older sentence is replaced only when it names the same subject (its head noun, or a synonym:
  "number"/"phone"), with the same owner ("my number" never retires "Sam's number"; "mom's dinner"
  retires "my mom's dinner" only; "the recital" may be anyone's the user speaks of), holds a value of the
  same type as the new one (a date for a date, a time for a time, a number, an email address; a place,
  "moved to Seattle", only one stated with "in"/"at"/"to"; any other value must follow the subject as
  "is"/"at"/"in"/"on" ...), and does not already say the new value. A change that names the old value
  ("from Denver to Austin") retires the sentence naming it. With "X not Y" the older sentence must name Y.
- **Instead of** (`_instead_of`): "we're going to Korea in October instead of Japan" retires the sentence
  naming Japan when the two share another word (what the plan is about).
- **The same frame, another value** (`restated_value`): said with an update cue ("now", "instead",
  "actually", "so far", "already", "lately", "not 300"), the words before a number, time or day ("wearing
  my garmin watch for" 9 months now) are found in the older sentence before another value of that
  type, counting the same thing ("months", never "books"); or the same counted thing is followed by the
  same words ("12 khan academy lectures in the past two weeks" after "8 lectures in the past two weeks").

- **Without a cue** (`_standing`, `_owned_attribute`, `_weekly_schedule`, `_changed_amount`): a value that
  holds until it changes, said again with another number in the same frame (a rate, "two hours each
  day"; how long a state has gone on, "i ve been using my fitbit for 9 months"; a count in the present
  tense, "i lead a team of 5 engineers"); an attribute of the user's named by two words ("my personal
  best time of 25 50"); how many days a week, as a count or as the days; a day or time that recurs ("a
  class on fridays", "i usually wake up at 6am"); an amount the user changed,
  changed again ("increased the limit to two cups" after "cut back to one cup").

Anything else is left alone: an unrelated fact never retires another, nor do two facts that only share a
word ("my sister's boss is now Marcus" keeps "my boss is Linda"; "I have 3 kids now" keeps "I have 2 cats"), nor
a past action said again ("I ran 3 miles" keeps "I ran 5 miles": two runs).

Sentences are the values resolution compares: lower case, punctuation folded (`resolution.normalize_value`).
"""

from __future__ import annotations

import re

from .dates import number_value
from .lexicon import RELATIONS

_CHANGE_VERBS = (
    r"moved|pushed|postponed|rescheduled|delayed|changed|shifted|bumped|brought|updated|extended|put off"
    r"|re-?scheduled|moving|pushing|postponing|rescheduling|delaying|changing|shifting|bumping|updating"
    r"|went up|went down|gone up|gone down|going up|going down|increased|decreased|raised|lowered|reduced|cut"
    r"|dropped|rose|upped"
)
_OWNER = r"(?:the|my|our|his|her|their)"
_OWNED = rf"(?:\b(?P<owner>{_OWNER}) |^|\b[a-z][\w-]* s )"
"""An owner word before the subject, a named owner ("mom s"), or none at the start (normalized values lose a
leading "the")."""
_NOUN = r"[a-z][\w-]*"
_SUBJECT = rf"(?P<subj>(?:{_NOUN} ){{0,2}}?{_NOUN})"
_BE = r"(?:is|are|will be|s|has been|was moved)"
_FROM = r"(?: from (?P<was>.+?))?"
"""The old value a change may name ("moved from denver to austin")."""
_CHANGES = (
    # "we moved the launch to May", "I changed my email to x@y.com", "pushed the deadline back to next week"
    re.compile(
        rf"\b(?:{_CHANGE_VERBS})(?: (?:back|forward|up|over))? (?:(?P<owner>{_OWNER}) )?{_SUBJECT}"
        rf"(?: (?:back|forward|up|over))?{_FROM} (?:to|until|till|for|into) (?P<val>.+)$"
    ),
    # "the launch was moved to May", "the meeting got pushed to Friday", "my rent went up to $1,650",
    # "the offsite has been moved from Denver to Austin", "my email changed to bob@new.com", "my number
    # changed, it's 555-9876 now"
    re.compile(
        rf"{_OWNED}{_SUBJECT} (?:(?:was|were|got|has been|have been|had been|s been|ve been|is being|is|are"
        rf"|has|have|s|ve|just|finally) )*(?:{_CHANGE_VERBS})"
        rf"(?: (?:back|forward|up|over))?{_FROM} (?:to|until|till|for|into|it s|it is|it ll be|they re|they are)"
        rf" (?P<val>.+)$"
    ),
    # "my new number is 555-9876", "our new address will be 40 elm road", "my current job is at globex"
    re.compile(rf"\b(?P<owner>{_OWNER}) (?:new|current|latest|updated) {_SUBJECT} {_BE} (?P<val>.+)$"),
    # "i got a new phone number it s 555-9876", "new number: 555-9876" (a typed value only: "a new dog, it's a
    # beagle" keeps the old dog)
    re.compile(rf"\ba new {_SUBJECT} (?:it s|it is|which is|is) (?P<typed>(?P<val>.+))$"),
    re.compile(rf"^(?:(?P<owner>my|our) )?new {_SUBJECT} (?P<typed>(?P<val>\S*\d\S*|\S+@\S+))$"),
    # "the meeting is now on friday", "my address is actually 40 elm road"
    re.compile(
        rf"{_OWNED}{_SUBJECT} (?:(?:these days|nowadays|currently|now) )?{_BE}"
        rf" (?:now|actually|instead|no longer .+? (?:but|it s|it is|they re|they are))"
        rf" (?P<val>.+)$"
    ),
    # "my address is 40 elm road now", "actually the meeting is on friday"
    re.compile(rf"{_OWNED}{_SUBJECT} {_BE} (?P<val>.+?) (?:now|instead)$"),
    # "my best friend these days is priya"
    re.compile(rf"{_OWNED}{_SUBJECT} (?:these days|nowadays|currently|now) {_BE} (?P<val>.+)$"),
    re.compile(rf"^(?:oh |wait |sorry |correction )?actually (?P<owner>{_OWNER}) {_SUBJECT} {_BE} (?P<val>.+)$"),
)
_NOT_INSTEAD = re.compile(
    r"\b(?:actually|sorry|correction|oops|wait|no)\b.*?\b(?P<val>[\w@.+:-]+(?: ?(?:am|pm))?) "
    r"(?:not|instead of|rather than) (?P<old>[\w@.+:-]+(?: ?(?:am|pm))?)\b"
)
""""actually it's 3pm not 2pm": the old value is named, the subject is not."""

_SYNONYMS = (
    frozenset({"number", "phone", "cell", "mobile"}),
    frozenset({"email", "e-mail"}),
    frozenset({"appointment", "appt"}),
    frozenset({"deadline", "due"}),
)
_TRAILING_SUBJECT_WORDS = frozenset({"number", "address", "date", "time", "day"})
"""Second words that do not name a kind of their own: "phone number" is about the phone, "launch date" the launch."""
_VAGUE = frozenset(
    "i we you he she they it this that me us him them myself ourselves everyone everybody someone people thing things"
    " one stuff plan plans time day date way place something"
    " everything lot".split()
)
"""Subjects that name nothing particular: "my plan is now to ..." says nothing about which plan."""
_OTHER_OWNER = re.compile(r"(?:\b(?:his|her|their|your)|\b(?!user\b)\w+ s) $")

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_PHONE = re.compile(r"\+?\d[\d -]{5,}\d")
_TIME = re.compile(r"\b\d{1,2}(?::\d\d)? ?(?:am|pm)\b|\b\d{1,2}:\d\d\b|\b(?:noon|midnight)\b")
_DATE = re.compile(
    r"\b(?:(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|january|february|march|april|may|june|july"
    r"|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|today"
    r"|tomorrow|tonight|weekend|week|month|year|spring|summer|autumn|fall|winter|\d{1,2}(?:st|nd|rd|th)"
    r"|\d{4}-\d\d-\d\d|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b"
)
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_TYPES = (("email", _EMAIL), ("phone", _PHONE), ("time", _TIME), ("date", _DATE), ("number", _NUMBER))
_STATED_AS = r"(?:is|are|was|will be|s|at|in|on|to|with|for|set for|scheduled for)"


def _head(words: list[str]) -> str:
    """The subject's head noun: "launch date" -> "launch", "phone number" -> "phone", "deadline" stays."""
    return words[-2] if len(words) > 1 and words[-1] in _TRAILING_SUBJECT_WORDS else words[-1]


def _kind(subject: str, *, typed: bool) -> frozenset[str]:
    """The words that name the subject's kind: its head noun and, for a typed value (a phone number, an
    email address), that noun's synonyms ("my new phone is an iphone" says nothing of the number)."""
    head = _head(subject.split())
    for group in _SYNONYMS if typed else ():
        if head in group:
            return group
    return frozenset({head})


def value_types(text: str) -> frozenset[str]:
    """The kinds of value `text` holds: "email", "phone", "time", "date", "number" (an empty set for none)."""
    found = set()
    rest = text
    for name, pattern in _TYPES:
        if pattern.search(rest):
            found.add(name)
            rest = pattern.sub(" ", rest)  # "555-9876" is a phone, not also a number
    return frozenset(found)


def _named_without_other_owner(old: str, kind: frozenset[str]) -> re.Match[str] | None:
    """Where `old` names a word of `kind` that no one else owns ("his number", "sam s phone")."""
    padded = f" {old} "
    for word in kind:
        for match in re.finditer(rf"(?<= ){re.escape(word)}(?= )", padded):
            if not _OTHER_OWNER.search(padded[: match.start()]):
                return match
    return None


def _named(old: str, kind: frozenset[str]) -> re.Match[str] | None:
    """Where `old` names a word of `kind`, whoever owns it."""
    padded = f" {old} "
    for word in kind:
        match = re.search(rf"(?<= ){re.escape(word)}(?= )", padded)
        if match:
            return match
    return None


def _names(text: str, value: str) -> bool:
    return bool(value) and f" {value} " in f" {text} "


def change_retires(new: str | None, old: str | None, *, said: str | None = None) -> bool:
    """Does the change said in `new` (a normalized sentence) replace the value `old` (another) states?
    `said` is the sentence as said, when `new` lost words of it (a trailing "now"): its update cues count."""
    if not new or not old or new == old:
        return False
    named = _NOT_INSTEAD.search(new)
    if named and value_types(named["old"]) and value_types(named["old"]) == value_types(named["val"]):
        return _names(old, named["old"]) and not _names(old, named["val"])  # "3pm not 2pm" retires "... at 2pm"
    texts = [_LEAD.sub("", new)]
    spoken = _fold(said) if said else ""
    rest = spoken[len(new) :].split() if spoken.startswith(new) else ()
    if rest and all(word in _TRAILING_CUES for word in rest):
        texts.append(_LEAD.sub("", spoken))  # "launch is may now": normalizing dropped the trailing "now"
    return (
        any(_changed_subject(text, old) or _switched_kind(text, old) for text in texts)
        or _instead_of(new, old)
        or restated_value(new, old, said=said)
        or _owned_attribute(new, old)
        or _weekly_schedule(new, old)
        or _changed_amount(new, old)
    )


_TRAILING_CUES = frozenset("now instead anymore these days nowadays".split())
_LEAD = re.compile(
    r"^(?:(?:heads up|fyi|btw|by the way|update|quick update|news|so|ok|okay|oh|also|and|hey|well|honestly"
    r"|just so you know|change of plans?) )+"
)
"""Words a chat message opens with before what it says ("heads up, launch moved to May")."""


def _fold(text: str) -> str:
    """`text` folded as resolution folds values, without dropping a trailing "now"."""
    return " ".join(re.sub(r"[^\w\s@.+-]", " ", text.casefold()).split()).strip(" .")


_SWITCHED_KIND = re.compile(r"\b(?:switched|changed|swapped) (?P<noun>[a-z]{3,})s (?:\S+ )+\S+")
"""A switch of kind followed by what replaced it ("switched gyms i go to equinox now"), not "switched gyms"."""


def _switched_kind(new: str, old: str) -> bool:
    """ "i switched gyms i go to equinox now" retires "my gym is planet fitness": the kind switched (a plural,
    "gyms", "dentists", "banks") is named in `old`, the user's, directly followed by its value."""
    match = _SWITCHED_KIND.search(new)
    if match is None or match["noun"] in _VAGUE:
        return False
    noun = match["noun"]
    where = _named_without_other_owner(old, frozenset({noun}))
    return where is not None and re.match(rf" (?:{_STATED_AS}) \S", f" {old} "[where.end() :]) is not None


_INSTEAD_OF = re.compile(r"\binstead of (?P<old>[a-z][\w.-]*(?: [a-z][\w-]*)?)(?: |$)")
_SHARED_STOP = frozenset(
    "i m me my we our us the a an to of in on at for with and or but is are was be been s ve re it this that user"
    " instead plans change".split()
)


def _instead_of(new: str, old: str) -> bool:
    """ "we're going to korea in october instead of japan" retires "visiting japan in october": `old` names
    what the change replaces and shares another word with `new` (what the plan is about)."""
    match = _INSTEAD_OF.search(new)
    if match is None:
        return False
    replaced = match["old"]
    if replaced.split()[0] in _VAGUE:
        return False  # "instead of it": what it replaces is said elsewhere
    if not any(_names(old, candidate) for candidate in (replaced, replaced.split()[0])):
        return False
    if len(replaced.split()) > 1 and _names(old, replaced):
        return True  # a name of two words ("instead of dr patel") is specific enough by itself
    others = set(new.split()) - set(replaced.split()) - _SHARED_STOP
    return bool(others & (set(old.split()) - _SHARED_STOP))


def _changed_subject(new: str, old: str) -> bool:
    """The first change pattern `new` matches names a subject `old` states a value of."""
    for pattern in _CHANGES:
        match = pattern.search(new)
        if match is None:
            continue
        subject, value = match["subj"], match["val"].strip()
        words = subject.split()
        if _NOT_A_NOUN & set(words):
            continue  # "moved up to may 28": "up" is no subject; a later pattern reads "my due date"
        if _head(words) in _VAGUE:
            return False
        if "s" in words[:-1]:  # "sister s boss": the boss is the sister's
            cut = len(words) - 1 - words[::-1].index("s")
            who, subject = words[cut - 1], " ".join(words[cut + 1 :])
            return _owned_by(old, who, subject) and _changed_value(old, value)
        someone = _NAMED_OWNER.search(new[: match.start("subj")])
        if someone is not None:  # "mom s dinner got moved to sunday" retires "my mom s dinner is on saturday" only
            return _owned_by(old, someone["who"], subject) and _changed_value(old, value)
        if _OTHER_OWNER.search(new[: match.start("subj")]):
            return False
        owner = match.groupdict().get("owner")
        if owner in ("his", "her", "their"):
            return False  # someone else's: the subject noun alone cannot say whose
        if match.groupdict().get("typed") and not value_types(value):
            return False
        was = match.groupdict().get("was")
        kind = _kind(subject, typed=bool(value_types(value)))
        mine = owner in ("my", "our")
        return _replaces(old, kind, value, was=was, placed=_placed(match), mine=mine)
    return False


_NAMED_OWNER = re.compile(r"(?:^|\b(?:my|our|the) )(?P<who>(?!user\b)[a-z][\w-]*) s $")
"""Someone the user names as the owner of the subject: "mom s", "my sister s" (not "his", "their")."""


def _owned_by(old: str, who: str, subject: str) -> bool:
    """Does `old` speak of `who`'s `subject` ("my mom s birthday dinner" for "mom", "dinner")?"""
    head = subject.split()[-1]
    return re.search(rf"\b{re.escape(who)} s (?:[\w-]+ ){{0,2}}{re.escape(head)}\b", old) is not None


def _changed_value(old: str, value: str) -> bool:
    """Does `old` state a value of the new one's type that is not the new one?"""
    wanted = value_types(value)
    return bool(wanted & value_types(old)) and not _names(old, value)


_NOT_A_NOUN = frozenset("to for from in on at by with back up down over just only also been being got".split())
_PLACE_PREPOSITION = re.compile(r"^(?:in|at|to|into|near) \S")
_DATE_MODIFIERS = frozenset("next this last early late mid end beginning start middle".split())
"""First words of a date, not a place: "pushed the deadline to next week"."""
_PLACE_PREPOSITION_WORD = re.compile(r"^(?:(?:in|at|to|into|near|the) )+")


def _placed(match: re.Match[str]) -> bool:
    """Is the new value a place ("moved to seattle", "is now in porto")?"""
    said = match.string[match.start() : match.start("val")]
    return said.endswith((" to ", " into ")) or _PLACE_PREPOSITION.match(match["val"]) is not None


def _replaces(
    old: str, kind: frozenset[str], value: str, *, was: str | None = None, placed: bool = False, mine: bool = True
) -> bool:
    """Does `old` state a value of the subject `kind` names that `value` replaces? With `mine` ("my number")
    the subject must not be someone else's in `old` ("sam s number"); without an owner ("the recital") it
    may be anyone's the user speaks of ("my daughter s recital")."""
    where = _named_without_other_owner(old, kind) if mine else _named(old, kind)
    if where is None or _names(old, value):
        return False
    if was and _names(old, was.strip()):
        return True  # "moved the offsite from denver to austin" retires "the offsite is in denver"
    wanted = value_types(value)
    first = _PLACE_PREPOSITION_WORD.sub("", value).split()[:1]
    place = placed and bool(first) and not value_types(first[0]) and first[0] not in _DATE_MODIFIERS
    if wanted and not place:  # "florida last year" is a place, said with a time
        return bool(wanted & value_types(old))
    after = f" {old} "[where.end() :]
    if place:  # a place replaces a place: "my sister moved to seattle" retires "... lives in chicago" only
        return re.match(rf" (?:\w+ )?(?:{_STATED_AS} )?(?:in|at|to|into|near) \S", after) is not None
    return re.match(rf" (?:\w+ )?{_STATED_AS} \S", after) is not None  # "the wedding is in rome" -> "... now in porto"


# --- an attribute of the user's named with another number -------------------------------------------------

_OWNED_NUMBER = re.compile(
    r"\bmy (?P<attr>(?:[\w-]*[a-z][\w-]* ){0,3}?[\w-]*[a-z][\w-]*) (?:is|of|are|s|for)"
    r" (?:about |around |only |just |now |currently )?"
    r"(?P<val>\d+(?:[ .]\d+)*)\b(?: (?P<unit>[a-z]+))?"
)
_ATTRIBUTE_REACH = 12
"""How many words after the attribute the old sentence may give its value ("set a personal best time in a charity
5k run with a time of 27 12")."""


def _owned_attribute(new: str, old: str) -> bool:
    """ "my personal best time of 25 50" retires "i set a personal best time in a charity 5k run with a time of
    27 12": `new` gives a number for an attribute of the user's named by two words or more ("my step goal is
    10 000", "my daily tidying routine for 4 weeks"); `old` names the same attribute, no one else's, and gives
    another number after it, counting the same thing (or nothing, as a time or an amount)."""
    match = _OWNED_NUMBER.search(new)
    if match is None:
        return False
    words = match["attr"].split()
    if len(words) < 2 or _head(words) in _VAGUE or _NOT_A_NOUN & set(words) or words[-1] in _FRAME_STOP:
        return False  # one word ("my budget is around 100") may be the budget of anything the talk is about
    value, unit = match["val"].replace(" ", ""), match["unit"]
    unit = None if unit is None or unit in _FRAME_STOP else _stem(unit)
    tokens = old.split()
    for start in range(len(tokens) - len(words) + 1):
        if tokens[start : start + len(words)] != words:
            continue
        before = " ".join(tokens[:start])
        if _OTHER_OWNER.search(f"{before} "):
            continue  # someone else's
        rest = tokens[start + len(words) : start + len(words) + _ATTRIBUTE_REACH]
        said = re.sub(r"\b(\d+) (\d{2,3})\b", r"\1\2", " ".join(rest)).split()
        for index, token in enumerate(said):
            if token.replace(".", "").isdigit():
                after = said[index + 1] if index + 1 < len(said) else None
                counted = None if after is None or after in _FRAME_STOP or after == "user" else _stem(after)
                if counted == unit:
                    return token != value
                break  # the number after this mention counts something else: try the next mention
    return False


# --- an amount the user changed, changed again ----------------------------------------------------------------

_AMOUNT_CHANGE = re.compile(
    r"\b(?:cut|cutting|reduced|reducing|increased|increasing|upped|raised|lowered|dropped|bumped|limited|went|gone"
    r"|going|scaled|brought|changed|changing|set)(?: (?P<subj>(?:[a-z][\w-]* ){0,3}?))?(?:back |down |up )?to"
    r" (?:just |only |about |around |roughly )?(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an)"
    r" (?P<unit>[a-z]+)\b"
)
_NOT_DONE_YET = re.compile(
    r"\b(?:thinking|considering|planning|plan|hoping|hope|want|wanted|wanting|might|may|should|could|would|try"
    r"|trying|going to|gonna|if|whether|wonder|wondering)\b"
)
_AMOUNT_NOUNS = frozenset("limit amount intake number dose consumption quota total max maximum".split())
"""Nouns that name an amount, not what is counted: "increased the limit to two cups" is about the cups."""
_OWNERS = frozenset("my the our a".split())


def _amount(text: str) -> tuple[str, str, frozenset[str]] | None:
    """The amount `text` says the user changed something to: (number, what it counts, what was changed)."""
    match = _AMOUNT_CHANGE.search(text)
    if match is None or match["unit"] in _FRAME_STOP:
        return None
    number = "1" if match["n"] in ("a", "an", "one") else match["n"]
    subject = frozenset((match["subj"] or "").split()) - _OWNERS - _AMOUNT_NOUNS - _FRAME_STOP
    return number, _stem(match["unit"]), subject


def _person(word: str) -> bool:
    return word in RELATIONS or (word.endswith("s") and word[:-1] in RELATIONS)


def _changed_amount(new: str, old: str) -> bool:
    """ "i have increased the limit to two cups" retires "i ve cut back to just one cup in the morning": both
    change an amount of the user's to a number of the same thing ("cup"), and what they change is the same or
    not said ("the limit"); "reduced my running to 10 miles" never retires "increased my cycling to 50 miles"."""
    fresh, earlier = _amount(new), _amount(old)
    if fresh is None or earlier is None or fresh[0] == earlier[0] or fresh[1] != earlier[1]:
        return False
    before = new[: _AMOUNT_CHANGE.search(new).start()]  # type: ignore[union-attr]
    if re.search(r"\b(?:his|her|their|your)\b", before) or _NOT_DONE_YET.search(before):
        return False  # someone else's amount, or a change only thought of ("thinking of changing it to two")
    said_by = before.split()
    speaker = max((i for i, w in enumerate(said_by) if w in ("i", "we")), default=-1)
    if said_by and (speaker < 0 or any(_person(w) for w in said_by[speaker + 1 :])):
        return False  # "my husband cut back to two cups" is his amount
    return not (fresh[2] and earlier[2]) or bool(fresh[2] & earlier[2])


# --- how many days a week ------------------------------------------------------------------------------------

_TIMES_A_WEEK = re.compile(
    r"\b(?:(?P<n>\d|one|two|three|four|five|six|seven) (?:times|days)|(?P<word>once|twice)) (?:a|per|each|every)"
    r" week\b"
)
_WEEKDAY = re.compile(r"\b(?P<day>monday|tuesday|wednesday|thursday|friday|saturday|sunday)s\b")
_CONTEXT_WORDS = 6
_SCHEDULE_GENERIC = frozenset("routine schedule time times week weeks day days usually always".split())


def _weekly(text: str) -> tuple[int, int] | None:
    """How many days a week `text` says something is done, and where it says it: "four times a week" -> 4,
    "on tuesdays thursdays and saturdays" (days said in the plural, a weekly habit) -> 3."""
    match = _TIMES_A_WEEK.search(text)
    if match:
        count = number_value(match["n"] or {"once": "one", "twice": "two"}[match["word"]])
        assert count is not None  # the pattern reads digits and one to seven only
        return count, match.start()
    days = list(_WEEKDAY.finditer(text))
    if len({d["day"] for d in days}) >= 2:
        return len({d["day"] for d in days}), days[0].start()
    return None


def _schedule_words(text: str, at: int) -> set[str]:
    words = text[:at].split()[-_CONTEXT_WORDS:]
    return {_stem(w) for w in words if len(w) > 2 and w not in _FRAME_STOP and w not in _SCHEDULE_GENERIC}


def _weekly_schedule(new: str, old: str) -> bool:
    """ "i ve been consistent with my gym routine four times a week" retires "i go to the gym on tuesdays
    thursdays and saturdays": both say how many days a week the user does something, the counts differ, and
    the words just before them share what is done ("gym"). A day said once ("on friday") is no schedule."""
    fresh, earlier = _weekly(new), _weekly(old)
    if fresh is None or earlier is None or fresh[0] == earlier[0]:
        return False
    if _OTHER_OWNER.search(f"{new[: fresh[1]]}") or re.search(r"\b(?:his|her|their|your)\b", new[: fresh[1]]):
        return False
    shared = _schedule_words(new, fresh[1]) & _schedule_words(old, earlier[1])
    return bool(shared)


# --- the same frame said again with another value ----------------------------------------------------------

_UPDATE_CUE = re.compile(
    r"\b(?:now|instead|actually|anymore|any more|no longer|these days|currently|so far|by now|already"
    r"|updated|update|correction|changed|moved|rescheduled|lately)\b|\bnot \d"
)
"""Words that say a sentence gives a value that holds from now on, or corrects an earlier one ("120, not 300")."""
_CHANGE_CUE = re.compile(
    r"\b(?:now|instead|actually|no longer|changed|moved|rescheduled|updated|correction)\b|\bnot \d"
)
"""The cues that say a day or a time changed; "so far", "already", "lately" only say a count grew: two sales "at
the market on may 15th" and "on may 29th" are two events."""
_CUE_WORDS = frozenset(
    "now instead actually anymore currently already lately only just about around roughly nearly almost usually"
    " normally typically generally".split()
)
_CUE_PHRASES = re.compile(r"\b(?:so far|these days|any more|by now|up to|down to)\b")
"""Dropped from a frame with the cues: "my commute is only 25 minutes now" has the frame of "my commute is 40 ..."."""
_AUXILIARIES = frozenset("m am re are been ve is s".split())
"""Dropped from a frame: "i m running" and "i run", "i ve been using" and "i ve used" ... say the same."""
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
    " eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred half dozen".split()
)
_DAY_OR_MONTH = re.compile(
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?$"
    r"|^(?:january|february|april|june|july|august|september|october|november|december)$"
)
_ORDINAL = re.compile(r"^\d{1,2}(?:st|nd|rd|th)$")
_TIME_TOKEN = re.compile(r"^\d{1,4}(?:am|pm)$|^(?:noon|midnight)$")
_FRAME_STOP = frozenset(
    "a an the my our i we me us you it to of for in on at by with and or but so is was be have has had do did"
    " about than then that which who when where while because since as if from into out up down per each every"
    " this these those there here may march".split()
)
"""Words that name nothing in a frame ("may" and "march" are months as often as not)."""
_FRAME_WORDS = 3
"""How many words before a value make its frame ("wearing my garmin watch for" -> "garmin watch for")."""


def update_cue(text: str) -> bool:
    """May `text` (as said or normalized) restate a value: an update cue with a number, time or day in it
    (`restated_value`), or one of the change patterns ("moved ... to", "my new ... is", "instead of ...")?"""
    folded = _LEAD.sub("", _fold(text))
    if _UPDATE_CUE.search(folded) and _values(_frame_tokens(folded)):
        return True
    patterns = (*_CHANGES, _INSTEAD_OF, _SWITCHED_KIND, _NOT_INSTEAD)
    return any(pattern.search(folded) for pattern in patterns)


def _token_type(token: str) -> str | None:
    if _TIME_TOKEN.match(token):
        return "time"
    if _DAY_OR_MONTH.match(token) or _ORDINAL.match(token):
        return "date"
    if token.replace(".", "").isdigit() or token in _NUMBER_WORDS:
        return "number"
    return None


def _stem(word: str) -> str:
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
        return word[:-1] if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiousl" else word
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _frame_tokens(text: str) -> list[str]:
    """`text`'s words as frames compare them: first person folded ("we", a memory's "user" -> "i"), amounts
    joined ("1 650", "8 30" -> one number, "3 pm" -> "3pm", "an hour" -> "1 hour"), cue words and auxiliaries
    dropped, endings stemmed (not those of small words: "this" stays)."""
    text = re.sub(r"\b(\d+) (\d{2,3})(?=(?:am|pm)?\b)", r"\1\2", _CUE_PHRASES.sub(" ", f" {text} "))
    text = re.sub(r"\b(\d+) (am|pm)\b", r"\1\2", text)
    text = _ONE_UNIT.sub(r"\g<lead>1 \g<unit>", text)
    text = _ONCE_TWICE.sub(lambda m: "1 times" if m[0] == "once" else "2 times", text)
    words = [{"we": "i", "our": "my", "us": "me", "user": "i"}.get(w, w) for w in text.split()]
    kept = [w for w in words if w not in _CUE_WORDS and w not in _AUXILIARIES]
    return [w if _token_type(w) or w in _FRAME_STOP else _stem(w) for w in kept]


_PERIODS = r"(?:minute|hour|day|night|week|weekend|month|year|morning|evening|session)s?"
_ONE_UNIT = re.compile(
    rf"(?P<lead>(?:^| )(?!(?:{_PERIODS}|times?|\d+) )\S+ )an? (?P<unit>{_PERIODS}|cup|glass|mile|kilometer|km|lap|page)"
    r"(?= )(?! (?:ago|later|earlier|before|or so)\b)"
)
""""an hour" is an amount ("about an hour each day" before "two hours each day"), unless it says a rate after
another amount ("2 hours a day": "a day" follows a unit) or a time ago ("a week ago")."""
_ONCE_TWICE = re.compile(r"\b(?:once|twice)\b(?= (?:a|per|each|every) )")
_RATE = re.compile(rf"^(?:times? )?(?:each|every|a|an|1|per) {_PERIODS}\b")
_DURATION_UNITS = frozenset("minute hour day night week weekend month year".split())
_PAST_MARKERS = frozenset("was were did had yesterday ago last".split())
_PAST_IRREGULAR = frozenset(
    "went ran got took made met came left began won lost bought sold flew drove wrote gave did quit became broke"
    " found spent set hit saw swam rode sang built caught taught brought held kept paid sent tried".split()
)


def _standing(words: list[str], tokens: list[str], at: int, unit: str | None) -> bool:
    """Does the number at `at` of `tokens` (the frame tokens of `words`, a normalized sentence) state a value
    that holds until it changes, so that saying it again with another number replaces it without an update
    cue? A rate ("about two hours each day", "3 times a week"), how long a state has gone on ("i ve been
    using my fitbit for 9 months"), a count said in the present tense ("i lead a team of 5 engineers",
    "i have 3 bikes") or a total so far ("i ve read 14 books this year"); not a count of a past action
    ("i ran 5 miles yesterday": another run)."""
    if unit is None:
        return False
    after = " ".join(tokens[_unit_end(tokens, at) : _unit_end(tokens, at) + 2])
    if _RATE.match(after) or (unit == "time" and _RATE.match(f"times {after}")):
        return True
    past = bool(_PAST_MARKERS & set(words)) or any(_past_form(word) for word in words[1:3])
    if at > 0 and tokens[at - 1] == "for" and unit in _DURATION_UNITS:
        return "been" in words and not past  # "i ve been learning spanish for 6 months", not "i was sick for 3 days"
    if words[:1] == ["i"] and words[1:2] in (["ve"], ["have"]) and "been" not in words:
        return True  # a total so far ("i ve read 14 books this year", "i ve run 5 marathons")
    return words[:1] == ["i"] and not past and "been" not in words


_HABIT_MARKERS = frozenset("usually every each always normally typically weekdays daily nightly".split())


def _habitual(words: list[str], token: str) -> bool:
    """Is the day or time `token` of `words` (a normalized sentence) one that recurs: a weekday in the plural
    ("a cocktail class on fridays") or a time said with "usually", "every", "each" ... ("i usually wake up at
    6am"), said by the user in the present; not "a meeting at 4pm", one meeting among others."""
    if words[:1] not in (["i"], ["we"]) or _PAST_MARKERS & set(words) or any(_past_form(w) for w in words[1:3]):
        return False  # someone else's habit, or a past one ("i sold jam at the market on saturdays")
    if _DAY_OR_MONTH.match(token) and token.endswith("s"):
        return True
    return _token_type(token) == "time" and bool(_HABIT_MARKERS & set(words))


_WINDOW_WORDS = frozenset("past last next few recent previous coming first since ago over".split())


def _names_an_attribute(frame: list[str]) -> bool:
    """Does a frame name what the value is of, not only when ("in the past" six weeks says a time window)?"""
    return any(w not in _FRAME_STOP and w not in _WINDOW_WORDS and not _token_type(w) for w in frame)


def _same_unit(new: str | None, old: str | None) -> bool:
    """Do two numbers count the same thing: no unit on the new one, the same word, or both a length of time
    ("about an hour every day now" after "20 minutes every day"; said with an update cue only)."""
    return new is None or new == old or (new in _DURATION_UNITS and old in _DURATION_UNITS)


def _past_form(word: str) -> bool:
    return word in _PAST_IRREGULAR or (len(word) > 4 and word.endswith("ed"))


def _values(tokens: list[str]) -> list[tuple[int, str]]:
    return [(i, kind) for i, token in enumerate(tokens) if (kind := _token_type(token))]


_UNIT_WORDS = 3


def _unit_end(tokens: list[str], at: int) -> int:
    """Where the words that say what a number counts end: "12 khan academy lectures in ..." -> after "lectures"."""
    end = at + 1
    while end < len(tokens) and end - at <= _UNIT_WORDS and tokens[end] not in _FRAME_STOP:
        if _token_type(tokens[end]):
            break
        end += 1
    return end


def _unit(tokens: list[str], at: int) -> str | None:
    """The word a number counts: the last of the words after it up to a small word ("6 months" -> "month",
    "12 khan academy lectures in" -> "lecture"), None when a small word or another value follows."""
    end = _unit_end(tokens, at)
    return tokens[end - 1] if end > at + 1 else None


def _named_thing(words: list[str]) -> bool:
    return not all(w in _FRAME_STOP or _token_type(w) for w in words)


def restated_value(new: str | None, old: str | None, *, said: str | None = None) -> bool:
    """Does `new`, said with an update cue ("now", "instead", "actually", "so far", ...), give another value in
    the same frame as `old` ("i ve been wearing my garmin watch for 9 months now" after "... for 6 months";
    "i m meeting sam on saturday instead" after "... on friday")?

    The frame is the `_FRAME_WORDS` words before the value, of which one at least names something (not only
    "i", "on", "the"); the old value must be of the same type (a number, a time, a day or month) and, for a
    number, count the same thing ("9 months" replaces "6 months", never "6 books"). A value `new` also
    names in `old`, or a frame found nowhere in `old`, leaves `old` alone."""
    if not new or not old:
        return False
    cued = _UPDATE_CUE.search(f"{new} {_fold(said) if said else ''}") is not None
    moved = _CHANGE_CUE.search(f"{new} {_fold(said) if said else ''}") is not None
    fresh, earlier = _frame_tokens(new), _frame_tokens(old)
    for at, kind in _values(fresh):
        habitual = kind != "number" and _habitual(new.split(), fresh[at])
        if fresh[at] in earlier or (kind != "number" and not moved and not habitual):
            continue  # the old sentence already says it; a one-off day or time changes only with "instead", "now" ...
        frame = fresh[max(0, at - _FRAME_WORDS) : at]
        unit = _unit(fresh, at) if kind == "number" else None
        if not cued and not habitual and not _standing(new.split(), fresh, at, unit):
            continue  # without a cue only a value that holds until it changes is replaced by another
        if len(frame) >= 2 and (unit is not None or _named_thing(frame)):  # "i have 3 cats": a frame by its unit
            for start in range(len(earlier) - len(frame)):
                index = start + len(frame)
                same_frame = earlier[start:index] == frame and earlier[index] != fresh[at]
                counted = _same_unit(unit, _unit(earlier, index)) if cued else unit in (None, _unit(earlier, index))
                alike = same_frame and _token_type(earlier[index]) == kind and counted
                if alike and (cued or (_names_an_attribute(frame) and _same_after(fresh, at, earlier, index))):
                    return True
        if unit is not None and _counted_alike(fresh, at, earlier, unit):
            return True
    return False


_AFTER_WORDS = 6


def _same_after(fresh: list[str], at: int, said: list[str], index: int) -> bool:
    """Without an update cue, do the two values go on alike: the same period for a rate ("two hours a day" for
    "an hour a day", never "a week") and, when both say what follows, a word of it in common ("on duolingo" for
    "on duolingo", never "on chess")?"""
    after_new = fresh[_unit_end(fresh, at) : _unit_end(fresh, at) + _AFTER_WORDS]
    after_old = said[_unit_end(said, index) : _unit_end(said, index) + _AFTER_WORDS]
    if "i" in after_old:  # another clause, or the stored memory's own wording after the sentence as said
        after_old = after_old[: after_old.index("i")]
    rate_new, rate_old = _RATE.match(" ".join(after_new[:2])), _RATE.match(" ".join(after_old[:2]))
    if rate_new and rate_old and after_new[1] != after_old[1]:
        return False
    named_new = {w for w in after_new if w not in _FRAME_STOP and not _token_type(w)} - _RATE_WORDS
    named_old = {w for w in after_old if w not in _FRAME_STOP and not _token_type(w)} - _RATE_WORDS
    return not (named_new and named_old) or bool(named_new & named_old)


_RATE_WORDS = frozenset("minute hour day night week weekend month year morning evening session time".split())


def _counted_alike(fresh: list[str], at: int, said: list[str], unit: str) -> bool:
    """Does `said` count the same thing (`unit`) with another number, followed by the same words ("watched 12
    khan academy lectures in the past two weeks" after "finished 8 lectures in the past two weeks")?"""
    end = _unit_end(fresh, at)
    after = fresh[end : end + _FRAME_WORDS]
    if len(after) < _FRAME_WORDS or not _named_thing(after):
        return False
    for index, token in enumerate(said):
        if _token_type(token) == "number" and token != fresh[at] and _unit(said, index) == unit:
            other = _unit_end(said, index)
            if said[other : other + _FRAME_WORDS] == after:
                return True
    return False


_TOPIC_STOP = frozenset("user has have been having is are was were".split()) | _SCHEDULE_GENERIC


def value_topic(text: str | None) -> str | None:
    """The words a stated value is about, for finding the older memory it may replace among many ("consistent
    gym routine" for "... been consistent with their gym routine - four times a week"): the words that name
    something before the first number (or weekly schedule) of `text`; None when it states no such value."""
    folded = _fold(text or "")
    tokens = folded.split()
    weekly = _weekly(folded)
    at = len(folded[: weekly[1]].split()) if weekly else next((i for i, _ in _values(tokens)), None)
    if at is None:
        return None
    words = [w for w in tokens[max(0, at - _CONTEXT_WORDS) : at] if len(w) > 2 and not _token_type(w)]
    named = [w for w in words if w not in _FRAME_STOP and w not in _TOPIC_STOP]
    return " ".join(named) or None


__all__ = ["change_retires", "restated_value", "update_cue", "value_topic", "value_types"]
