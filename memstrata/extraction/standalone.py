"""Whether a memory's wording stands alone, once the conversation it came from is gone (pure, no I/O).

A memory is read later, by someone who never saw the talk. Wording that points back into the talk
means nothing then ("The user remembers the facilitator was kind": which facilitator?), however well
the rest of it was read. `context_reason` names why a candidate's third-person content leans on the
conversation, by a category of language, or returns None. In the order asked:

- "fragment": a piece of a quotation (an unbalanced quote mark) or a noun phrase with no predicate
  ("The user's commuter bike for daily commutes.").
- "listener": the memory names the one spoken to ("the assistant", rendered from "you"), the words of
  this talk ("the reminder ... is helpful", "the tips") or a move within it (an offer: "is always down
  to give recommendations"; a correction: "needs to correct themselves"): a thanks, a reaction to
  advice, a promise. Requests and instructions are addressed to the assistant by nature and are not
  asked (`applies`).
- "reaction": puzzlement at a topic of the talk ("does not get why ...", "can't wrap their head around
  the fact that ...").
- "pointer": something shown ("Here's one Melanie did"), "there" as the place of a doing ("sitting
  there"), or an afterthought whose preposition lost its object ("..., speaking of.").
- "comparison": a standard only the talk gave ("similar journeys", "the other group members").
- "pronoun": "it", "he", "she", "him", "his", "her" or a demonstrative with no antecedent in the memory
  ("The user bought a blue bike and loves it" has one; "The user has been using it" has none).
  "They/them/their" are left alone: the renderer writes them for the speaker ("their morning run"). An
  "it" that points forward is no pointer ("loves it when their kids visit").
- "indefinite": an indefinite or universal pronoun left open ("getting everything ready", "selling some
  to friends", "whatever comes their way") or a placeholder noun as the point ("working on a project").
  "Everything about Japan" restricts it.
- "definite": a one-word definite noun phrase ("the facilitator", "the foam", "the genre") that nothing
  after it restricts and whose noun a community does not share without introduction (`SHARED_DEFINITES`:
  "the gym", "the kids", "the weekend"). "The trip to Lisbon", "the Eiffel Tower" and "the homeless
  shelter" say which one themselves.

Quoted words (titles, phrases) are not read for pointers.
"""

from __future__ import annotations

import re

from .base import Candidate
from .lexicon import RELATIONS, wordset

_CHECKED_ATTRIBUTES = wordset("statement event routine task likes habit project plan note")
"""Free-worded memories: a slot value (a name, a city, a job) is checked by its own rule."""


def applies(candidate: Candidate) -> bool:
    """True for a candidate whose wording is free enough to lean on the talk: a statement, an event, a
    routine, a liking or habit, a task or a project; never a request, an instruction, a slot or a
    relation."""
    return candidate.category not in ("request", "instruction") and (candidate.attribute or "") in _CHECKED_ATTRIBUTES


def stands_alone(candidate: Candidate) -> bool:
    """True unless `context_reason` finds the candidate's content leaning on the conversation."""
    if not applies(candidate):
        return True
    dated = candidate.event_time is not None
    return context_reason(candidate.content, task=candidate.category == "open_item", dated=dated) is None


def context_reason(content: str, *, task: bool = False, dated: bool = False) -> str | None:
    """Why the third-person `content` needs the conversation to mean anything, or None (module doc).
    A `task` (an open item) is not asked about its
    definites: "migrate the database before the release" is the speaker's own errand, whose things the
    speaker knows, and it is kept only until it is done. A `dated` memory may open on the speaker's own
    occasion ("The launch is on 10 April 2026", "The wedding is in June"): its date says which one."""
    if content.count('"') % 2 or no_predicate(content):
        return "fragment"
    content = _QUOTED.sub("_", content)
    if _LISTENER.search(content) or _TALK.search(content) or _TALK_MOVE.search(content):
        return "listener"
    if _PUZZLED.search(content):
        return "reaction"
    if _SHOWN.search(content) or _DEICTIC_PLACE.search(content) or _STRANDED.search(content):
        return "pointer"
    if _NO_STANDARD.search(content):
        return "comparison"
    if unresolved_pronoun(content):
        return "pronoun"
    if bare_indefinite(content):
        return "indefinite"
    if not task and bare_definite(content, dated_subject=dated):
        return "definite"
    return None


_QUOTED = re.compile(r"\"[^\"]*\"|(?<!\w)'[^']*'(?!\w)|[\u201c][^\u201d]*[\u201d]")
_LISTENER = re.compile(r"\bthe assistant(?:'s)?\b|\byou(?:r|rs|rself|'re|'ve|'ll|'d)?\b", re.IGNORECASE)
_TALK = re.compile(
    r"\bthe (?:reminder|reminders|advice|tip|tips|suggestion|suggestions|recommendation|recommendations|ideas"
    r"|information|answer|answers|response|explanation|feedback|pointers|insights)\b",
    re.IGNORECASE,
)
"""Words of this very talk ("the reminder to be kind is helpful", "the tips"): a reaction to the advice."""
_TALK_MOVE = re.compile(
    r"\b(?:is|are|am)(?: always| more than| really| so| very| just)* (?:happy|glad|down|willing|here|available) to"
    r" (?:help|give|share|chat|talk|answer|listen|lend|recommend|offer)\b"
    r"|\bto (?:correct|clarify|rephrase|repeat) (?:themselves|that|this|it)\b",
    re.IGNORECASE,
)
"""A move within the talk: an offer ("is always down to give movie recommendations") or a correction of
one's own words ("needs to correct themselves")."""
_PUZZLED = re.compile(
    r"\b(?:does not|doesn't|do not|don't|cannot|can't|could not|couldn't)(?: \w+ly)? (?:get|understand|see|believe"
    r"|wrap their head around|figure out) (?:why|how|what|the fact|whether)\b",
    re.IGNORECASE,
)
"""Puzzlement at a topic ("does not get why the Medici family is glorified", "can't wrap their head around
the fact that ..."): a reaction to what the talk is about, not a fact about the speaker."""
_SHOWN = re.compile(r"\bhere(?:'s| is| are)\b", re.IGNORECASE)
"""A pointer at something shown in the talk ("Here's one Melanie did"): a photo, a link."""
_DEICTIC_PLACE = re.compile(
    r"\b(?:sitting|sat|standing|stood|living|lived|live|lives|staying|stayed|stay|moved|move|moving|went|go|goes"
    r"|going|gone|arrived|met|meet|meeting|visited|visit|visiting|working|worked|studying|studied) there\b"
    r"(?! for\b)",
    re.IGNORECASE,
)
""""There" as the place of the speaker's doing ("sitting there with their family", "moved there"): where,
only the talk said; the "there" of existence ("there are so many styles") or of support ("always there
for them") points at no place."""
_STRANDED = re.compile(r",\s*[\w'-]+ (?:of|with|about|to|for|from|at)\W*$", re.IGNORECASE)
"""An afterthought whose preposition lost its object ("..., speaking of."): the object was said before. A
relative or infinitive clause strands one on purpose ("the shelter Maria volunteers at", "books to choose
from") and is not asked."""
_NO_STANDARD = re.compile(
    r"\bsimilar\b(?! to\b)|\bsuch (?:a |an )?[\w-]+\b(?! as\b)|\bthe other\b(?! day\b| side of\b)",
    re.IGNORECASE,
)
"""A comparison whose standard the talk gave ("people who've gone through similar journeys", "against
such a mess", "the other group members"): similar to what, other than which, only the talk says; "another
camping trip" is one more of the speaker's own, and stands."""

# --- fragments --------------------------------------------------------------------------------------

_POSSESSED_SUBJECT = re.compile(
    r"^(?:the user's|(?-i:[A-Z])[a-z]+'s) (?:[\w-]+ ){0,2}?[\w-]+(?=,| (?:for|with|in|on|at|from|and)\b)",
    re.IGNORECASE,
)
"""The speaker's thing as the subject ("The user's commuter bike"), up to a comma or a preposition."""
_POSSESSOR = re.compile(r"^(?:the user's|\w+'s) ", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(?:the user|(?-i:[A-Z])[a-z]+)(?: \w+ly| just| also| recently)* \w+", re.IGNORECASE)
_VERB = re.compile(
    r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|can|could|will|would|should|must|may|might|need|needs"
    r"|get|gets|got|go|goes|went|make|makes|made|take|takes|took|keep|keeps|kept|give|gives|gave|feel|feels|felt"
    r"|love|loves|like|likes|seem|seems|run|runs|ran|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)


def no_predicate(content: str) -> bool:
    """True for a noun phrase without a verb: the speaker's things listed or described, nothing said of
    them ("The user's commuter bike for daily commutes.", "The user's road bike, mountain bike, and a new
    hybrid bike the user just purchased."); a relative clause ("the user just purchased") is no predicate
    of the phrase."""
    subject = _POSSESSED_SUBJECT.match(content)
    if subject is None:
        return False
    rest = content[subject.end() :]
    for relative in reversed(list(_RELATIVE.finditer(rest))):
        before = rest[: relative.start()].rstrip()
        if before and before[-1].isalpha() and not before.casefold().endswith((" and", " or", " but")):
            rest = rest[: relative.start()] + rest[relative.end() :]  # "a bike the user just purchased"
    phrase = _POSSESSOR.sub("", content[: subject.end()])
    return not _VERB.search(f"{phrase} {rest}")


# --- pronouns ---------------------------------------------------------------------------------------

_POINTER = re.compile(r"\b(?:it|he|she|him|his|her|this|these|those)\b", re.IGNORECASE)
_THAT_THING = re.compile(
    r"\b(?:at|in|on|from|for|with|about|during|after|before|since|like|of) that (?!(?:is|was|are|were|the|a|an|i"
    r"|it|they|he|she|we|[a-z]+ly)\b)[a-z]+\b(?=\s*(?:[.,;:!?]|$)|\s+(?:is|was|are|were|and|but|so)\b)",
    re.IGNORECASE,
)
"""A demonstrative "that" after a preposition with a bare noun ("at that event was ...", "in that moment."):
which one, the talk said; "after that lecture the user attended" says it itself."""
_FORWARD = re.compile(
    r"^\s*(?:'s |is |was |has |had )?(?:been |taken |takes |took |made |makes )?(?:[\w-]+ ){0,2}?"
    r"(?:when|whenever|if|to|since|that)\b",
    re.IGNORECASE,
)
"""After "it": a pointer forward ("loves it when their kids visit", "it takes an hour to", "it's been six
weeks since")."""
_TIME_AFTER = re.compile(
    r"^\s*(?:week|weekend|morning|afternoon|evening|night|year|month|summer|winter|spring|fall|autumn|season"
    r"|semester|term|time|past|days|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b",
    re.IGNORECASE,
)
"""After "this/these": a time ("this week", "these days"), which the message date fixes."""
_POINTED = re.compile(r"^\s*(?:[\w'-]+ ){0,2}?[\w'-]+(?:\s*(?:[.,;:!?)]|$)|\s+(?:is|are|was|were|and|but|so)\b)")
"""A demonstrative with a bare noun and nothing after it that says which ("this thing.", "those ones are")."""
_BOUNDARY_BEFORE = re.compile(r",|\b(?:and|but|so|because)\b", re.IGNORECASE)
_THING_BEFORE = re.compile(r"\b(?:a|an|their|the user's|(?-i:[A-Z])[a-z]+'s) [\w-]+", re.IGNORECASE)
_PERSON_BEFORE = re.compile(r"(?<=\w )(?-i:[A-Z])[a-z]+\b")
_FUNCTION_AFTER = re.compile(
    r"^\s*(?:[.,;:!?)]|$|(?:is|are|was|were|has|have|had|and|but|so|for|to|with|in|on|at|again|too|out|up|one)\b)",
    re.IGNORECASE,
)


def unresolved_pronoun(content: str) -> bool:
    """True when a pronoun or demonstrative of `content` has nothing in `content` to stand for: "it" as
    the object of the memory's first clause with no thing named before it, "he/she/his/her" with no name
    or relative before it, a demonstrative used as a pronoun ("did this") or before a bare noun nothing
    restricts ("this thing."), or "that" pointing at a thing ("at that event")."""
    if _THAT_THING.search(content):
        return True
    for pointer in _POINTER.finditer(content):
        word = pointer.group(0).casefold()
        before, after = content[: pointer.start()], content[pointer.end() :]
        if word in ("this", "these", "those"):
            if _TIME_AFTER.match(after):
                continue
            if _FUNCTION_AFTER.match(after) or _POINTED.match(after):
                return True
            continue
        if word == "it":
            if _FORWARD.match(after) or _BOUNDARY_BEFORE.search(before) or _THING_BEFORE.search(before):
                continue
            return True
        if not _PERSON_BEFORE.search(before) and not _kin_before(before):
            return True
    return False


def _kin_before(before: str) -> bool:
    words = re.findall(r"[a-z]+", before.casefold())
    return any(w in RELATIONS or w.rstrip("s") in RELATIONS for w in words)


# --- indefinite pronouns ----------------------------------------------------------------------------

_INDEFINITE = re.compile(
    r"\b(?:whatever|whoever|wherever|whichever)\b"
    r"|\b(?:everything|everyone|everybody|something|someone|somebody|anything|anyone|anybody)\b"
    r"(?! (?:about|at|in|from|of|on|for|with|who|that|i|the user|called|named|like|else at)\b)(?! (?-i:[A-Z0-9]))"
    r"(?!'s)|\bsome(?= (?:to|for|from|with|of it|of them|too|again|back|yet)\b|\W*$)",
    re.IGNORECASE,
)


_PLACEHOLDER = re.compile(
    r"\b(?:a|an|some)(?: new| big| small| little| few| couple of| side)? (?:project|projects|thing|things|stuff)\b"
    r"(?:\W+(?:lately|recently|now|these days|at the moment|right now))?\W*$",
    re.IGNORECASE,
)
"""A placeholder noun as the whole point ("has been working on a project lately", "got some stuff"): what it
is, the talk said, if anyone did."""


def bare_indefinite(content: str) -> bool:
    """True when an indefinite or universal pronoun is left unrestricted ("helped with getting everything
    ready", "has been selling some to friends"), or a placeholder noun is the point ("working on a
    project")."""
    return bool(_INDEFINITE.search(content) or _PLACEHOLDER.search(content))


# --- definite noun phrases --------------------------------------------------------------------------

SHARED_DEFINITES = wordset(
    """gym beach park office library store shop shops supermarket mall market doctor dentist hospital clinic vet
    pharmacy bank airport station city town country countryside mountains mountain lake ocean sea river woods forest
    pool kitchen garden yard backyard home neighborhood neighbourhood news radio internet web tv television
    piano guitar violin drums cello flute saxophone trumpet ukulele weekend weekends morning mornings evening evenings
    afternoon afternoons night nights future past world family kids children baby dog dogs cat cats bus train subway
    metro car couch bed movies cinema theater theatre church temple mosque synagogue school university college
    campus weather sun moon stars holidays summer winter spring fall autumn time day days week weeks month months
    year years outdoors zoo aquarium museum museums farm farmers groceries grocery laundry dishes house garage
    basement attic work job team bar pub cafe restaurant trail trails hills coast road roads streets street
    mail post phone computer laptop rest rain snow wind holiday season seasons side way end start beginning moment
    middle top bottom most least same first last whole lot best worst rest workplace court field pitch stage track
    slopes water waves studio business bathroom bedroom paperwork bills taxes chores rent plants military army navy
    police government economy environment community planet twins""",
)
"""Nouns a definite article introduces without the talk: places and institutions everyone has ("the gym",
"the doctor"), the household ("the kids", "the garden"), times ("the weekend"), media and instruments
("the news", "the piano"), and the quantifying uses ("the most", "the rest")."""
_TOKEN = re.compile(r"[\w'-]+|[^\w\s]")
_RESTRICTORS = wordset(
    """of in at on from for to with about by near between behind under over that which who whom whose where when
    i we they he she called named"""
)
"""Words after a noun phrase that say which one it is ("the trip to Lisbon", "the book that ...", "the novel
they wrote")."""
_PREPOSITIONS = wordset(
    """of in at on from for to with about by near between behind under over before after during since until around
    across through into onto off"""
)
_PHRASE_ENDS = _RESTRICTORS | wordset(
    """is are was were be been has have had do does did will would can could should may might must and or but so
    because as while if then than too also very really just still again always never now there here right it
    they them their he she his her a an the this these those every each some any all more most"""
)


def bare_definite(content: str, *, dated_subject: bool = False) -> bool:
    """True when `content` holds a one-word definite noun phrase ("the facilitator", "the foam") that
    nothing after it restricts and the community does not share: which one, only the conversation said.
    A longer phrase mostly says which one itself ("the homeless shelter", "the gold level"). With
    `dated_subject`, the memory's opening definite is an occasion its date fixes ("The launch is on ...")."""
    tokens = _TOKEN.findall(content)
    for at, token in enumerate(tokens[:-1]):
        if token.casefold() != "the" or (at == 0 and dated_subject):
            continue
        noun = tokens[at + 1]
        after = tokens[at + 2].casefold() if at + 2 < len(tokens) else ""
        if not noun[0].isalpha() or noun.casefold() in ("user", "user's", "assistant", "assistant's"):
            continue
        if after[:1].isalnum() and after not in _PHRASE_ENDS or after in ("and", "or"):
            continue  # a longer phrase: "the bereavement support group", "the tech and jokes of Iron Man"
        if after and not after[:1].isalnum() and after not in ".,;:!?)":
            continue  # an apposition: "the hashtag #fitnessmotivation", "the song 'Hello'"
        if after == "the" and tokens[at + 3 : at + 4] == ["user"]:
            continue  # a relative clause: "the challenges the user completes"
        if after in _RESTRICTORS or noun[:1].isupper() or _shared(noun):
            continue  # "the trip to Lisbon"; "the Lakers"; "the gym", "the kids"
        if at and tokens[at - 1].casefold() in _PREPOSITIONS and _anchored(tokens):
            continue  # circumstance of a memory about a name or a number: "in Lisbon for the conference"
        return True
    return False


def _anchored(tokens: list[str]) -> bool:
    """True when the memory names something or gives a number beyond its subject ("Lisbon", "3 hours"); a
    possessive ("John's rivals") names the owner, often the speaker, not the thing."""
    return any((t[:1].isupper() and t != "I" and not t.endswith("'s")) or t[:1].isdigit() for t in tokens[1:])


def _shared(word: str) -> bool:
    low = word.casefold().strip("'")
    return low in SHARED_DEFINITES or (low.endswith("s") and low[:-1] in SHARED_DEFINITES) or low in RELATIONS


__all__ = ["SHARED_DEFINITES", "applies", "bare_definite", "bare_indefinite", "context_reason", "stands_alone"]
