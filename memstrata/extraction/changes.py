"""A restated value of one attribute retires the older value (pure, no I/O).

"we moved the launch to May" replaces "the launch is on April 10"; "my new number is 555-9876" replaces
"my number is 555-1234"; "the meeting is now on Friday" replaces "the meeting is on Thursday"; "actually
it's 3pm not 2pm" replaces "the call is at 2pm". A change is read from the newer sentence as a *subject*
(the thing whose attribute changed: "the launch", "my number") and a new *value*, signalled by an update
cue: a verb of change ("moved", "changed", "pushed", "postponed", "rescheduled", ... "to"), "new", "now",
"actually", "instead", or "X not Y".

The older sentence is replaced only when it names the same subject (its head noun, or a synonym:
"number"/"phone"), with no other owner ("my number" never retires "Sam's number"), holds a value of the
same type as the new one (a date for a date, a time for a time, a number, an email address; any other
value must follow the subject as "is"/"at"/"in"/"on" ...), and does not already say the new value. With
"X not Y" the older sentence must name Y itself. Anything else is left alone: an unrelated fact never
retires another.

Sentences are the values resolution compares: lower case, punctuation folded (`resolution.normalize_value`).
"""

from __future__ import annotations

import re

_CHANGE_VERBS = (
    r"moved|pushed|postponed|rescheduled|delayed|changed|shifted|bumped|brought|updated|extended|put off"
    r"|re-?scheduled"
)
_OWNER = r"(?:the|my|our|his|her|their)"
_OWNED = rf"(?:\b(?P<owner>{_OWNER}) |^)"
"""An owner word before the subject, or none at the start (normalized values lose a leading "the")."""
_NOUN = r"[a-z][\w-]*"
_SUBJECT = rf"(?P<subj>(?:{_NOUN} ){{0,2}}?{_NOUN})"
_BE = r"(?:is|are|will be|s|has been|was moved)"
_CHANGES = (
    # "we moved the launch to May", "I changed my email to x@y.com", "pushed the deadline back to next week"
    re.compile(
        rf"\b(?:{_CHANGE_VERBS})(?: (?:back|forward|up|over))? (?P<owner>{_OWNER}) {_SUBJECT}"
        rf"(?: (?:back|forward|up|over))? (?:to|until|till|for|into) (?P<val>.+)$"
    ),
    # "the launch was moved to May", "the meeting got pushed to Friday"
    re.compile(
        rf"{_OWNED}{_SUBJECT} (?:was|got|has been|is being|is) (?:{_CHANGE_VERBS})"
        rf"(?: (?:back|forward|up|over))? (?:to|until|till|for|into) (?P<val>.+)$"
    ),
    # "my new number is 555-9876", "our new address will be 40 elm road"
    re.compile(rf"\b(?P<owner>{_OWNER}) new {_SUBJECT} {_BE} (?P<val>.+)$"),
    # "the meeting is now on friday", "my address is actually 40 elm road"
    re.compile(rf"{_OWNED}{_SUBJECT} {_BE} (?:now|actually|instead|no longer .+? but) (?P<val>.+)$"),
    # "my address is 40 elm road now", "actually the meeting is on friday"
    re.compile(rf"{_OWNED}{_SUBJECT} {_BE} (?P<val>.+?) (?:now|instead)$"),
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
    "i we you he she they it this that thing things one stuff plan plans time day date way place something"
    " everything lot".split()
)
"""Subjects that name nothing particular: "my plan is now to ..." says nothing about which plan."""
_OTHER_OWNER = re.compile(r"(?:\b(?:his|her|their|your)|\b(?!user\b)\w+ s) $")

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_PHONE = re.compile(r"\+?\d[\d -]{5,}\d")
_TIME = re.compile(r"\b\d{1,2}(?::\d\d)? ?(?:am|pm)\b|\b\d{1,2}:\d\d\b|\b(?:noon|midnight)\b")
_DATE = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july"
    r"|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|today"
    r"|tomorrow|tonight|weekend|week|month|year|spring|summer|autumn|fall|winter|\d{1,2}(?:st|nd|rd|th)"
    r"|\d{4}-\d\d-\d\d|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b"
)
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_TYPES = (("email", _EMAIL), ("phone", _PHONE), ("time", _TIME), ("date", _DATE), ("number", _NUMBER))
_STATED_AS = r"(?:is|are|was|will be|s|at|in|on|to|with|for|set for|scheduled for)"


def _kind(subject: str, *, typed: bool) -> frozenset[str]:
    """The words that name the subject's kind: its head noun and, for a typed value (a phone number, an
    email address), that noun's synonyms ("my new phone is an iphone" says nothing of the number)."""
    words = subject.split()
    head = words[-2] if len(words) > 1 and words[-1] in _TRAILING_SUBJECT_WORDS else words[-1]
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


def _names(text: str, value: str) -> bool:
    return bool(value) and f" {value} " in f" {text} "


def change_retires(new: str | None, old: str | None) -> bool:
    """Does the change said in `new` (a normalized sentence) replace the value `old` (another) states?"""
    if not new or not old or new == old:
        return False
    named = _NOT_INSTEAD.search(new)
    if named and value_types(named["old"]) and value_types(named["old"]) == value_types(named["val"]):
        return _names(old, named["old"]) and not _names(old, named["val"])  # "3pm not 2pm" retires "... at 2pm"
    for pattern in _CHANGES:
        match = pattern.search(new)
        if match is None:
            continue
        subject, value = match["subj"], match["val"].strip()
        if subject.split()[-1] in _VAGUE or _OTHER_OWNER.search(f"{new[: match.start('subj')]}"):
            return False
        if match["owner"] in ("his", "her", "their"):
            return False  # someone else's: the subject noun alone cannot say whose
        return _replaces(old, _kind(subject, typed=bool(value_types(value))), value)
    return False


def _replaces(old: str, kind: frozenset[str], value: str) -> bool:
    where = _named_without_other_owner(old, kind)
    if where is None or _names(old, value):
        return False
    wanted = value_types(value)
    if wanted:
        return bool(wanted & value_types(old))
    after = f" {old} "[where.end() :]
    return re.match(rf" (?:\w+ )?{_STATED_AS} \S", after) is not None  # "the wedding is in rome" -> "... now in porto"


__all__ = ["change_retires", "value_types"]
