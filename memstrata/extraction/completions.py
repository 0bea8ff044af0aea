"""A message that reports an open item done closes it (pure, no I/O).

"I called the dentist" closes "call the dentist"; "done with the report" and "the report is finished"
close "finish the report"; "I already sent it" closes "send the invoice to Sam" when that is the only
open item sent. An open item is the value of a task memory ("remind me to call the dentist" ->
"call the dentist", `rules.open_items`); the message closes it when one of its sentences

- says it done in general ("done", "finished", "completed", "sorted", "took care of", ...) and shares a
  word with the item beyond its verb ("report"), or
- says the item's own verb in the past ("called", "sent", "renewed", "followed up", "cancelled"), as the
  speaker or without a subject, and shares a word with the item, or names it with a pronoun ("sent it")
  when no other open item has that verb, or
- says it as a passive after a word of the item ("the faucet is fixed now", "the report's sent") or as
  "got ... booked" said by the speaker ("finally got the dentist appointment booked").

A sentence that is a question, negated ("I haven't called the dentist yet") or still ahead ("I'll call
the dentist tomorrow", "I still need to ...") closes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models import MemoryKind
from .base import Candidate, Message
from .render import third_person_object

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\s+(?:but|and then|then)\s+|\n+", re.IGNORECASE)
_NOT_DONE = re.compile(
    r"\b(?:not|never|no|yet|still|need|needs|have to|has to|got to|gotta|must|should|will|'ll|going to|gonna"
    r"|want to|wants to|plan to|try to|remind|forget|forgot|later|tomorrow|tonight|next|almost|nearly|half"
    r"|haven't|hasn't|didn't|don't|doesn't|won't|can't|couldn't|wasn't|isn't|if|when|before)\b|n't\b",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:done|finished|completed|complete|sorted|handled|submitted|taken care of|took care of|dealt with"
    r"|ticked off|crossed off|wrapped up|out of the way|checked off)\b",
    re.IGNORECASE,
)
_SPEAKER = re.compile(
    r"^(?:(?:ok|okay|so|well|update|yay|good news|btw|also|finally|phew|great)[,:!]?\s+)*"
    r"(?:(?:i|we)(?:'ve|'d| have| had)?\s+)?(?:(?:just|already|finally|actually|also|now|today|yesterday)\s+)*$",
    re.IGNORECASE,
)
"""What may stand before the item's verb: the speaker ("I", "we've"), adverbs, or nothing ("called them")."""
_PASSIVE = re.compile(r"(?:\b(?:is|are|was|were|been)|'s|’s)\s+(?:(?:all|finally|now|already|just)\s+)?$", re.I)
"""What stands before the verb of a passive done report: "the faucet is fixed", "the report's sent"."""
_GOT = re.compile(r"\bgot\s+(?:\S+\s+){1,4}$", re.IGNORECASE)
"""... or "got the appointment booked", said by the speaker (`_SPEAKER` before "got")."""
_PRONOUN = re.compile(r"^\s*(?:it|that|this|them|those|these|him|her)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NOT_CORE = frozenset(
    "a an the my our your his her their to for with about on at in of by from up and or it that this them me us"
    " i we you some any all again today tomorrow tonight week weekend month year next this morning evening"
    " monday tuesday wednesday thursday friday saturday sunday asap soon later first".split()
)
_FOLLOW = frozenset({"with", "on", "about", "re", "regarding"})
_IRREGULAR = {
    "send": ("sent",),
    "buy": ("bought",),
    "pay": ("paid",),
    "write": ("wrote", "written"),
    "get": ("got", "gotten"),
    "do": ("did", "done"),
    "make": ("made",),
    "take": ("took", "taken"),
    "go": ("went", "gone"),
    "meet": ("met",),
    "tell": ("told",),
    "bring": ("brought",),
    "find": ("found",),
    "give": ("gave", "given"),
    "leave": ("left",),
    "read": ("read",),
    "ring": ("rang", "rung"),
    "sell": ("sold",),
    "put": ("put",),
    "set": ("set",),
    "pick": ("picked",),
    "see": ("saw", "seen"),
    "speak": ("spoke", "spoken"),
    "fix": ("fixed",),
    "drop": ("dropped",),
    "plan": ("planned",),
    "stop": ("stopped",),
    "hand": ("handed",),
    "win": ("won",),
    "catch": ("caught",),
    "teach": ("taught",),
    "think": ("thought",),
    "sign": ("signed",),
    "hold": ("held",),
    "forward": ("forwarded",),
    "upload": ("uploaded",),
    "text": ("texted",),
    "feed": ("fed",),
    "run": ("ran",),
}


def _words(text: str) -> list[str]:
    """Lower-cased words, a possessive "'s" dropped ("the report's done" names the report)."""
    return [w.removesuffix("'s") for w in _WORD.findall(text.casefold().replace("’", "'"))]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def past_forms(verb: str) -> frozenset[str]:
    """The past tense and participle of `verb` ("call" -> "called"; "send" -> "sent")."""
    verb = verb.casefold()
    if verb in _IRREGULAR:
        return frozenset(_IRREGULAR[verb])
    if verb.endswith("e"):
        return frozenset({verb + "d"})
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return frozenset({verb[:-1] + "ied"})
    if len(verb) > 2 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou":
        return frozenset({verb + "ed", verb + verb[-1] + "ed"})  # "canceled" and "cancelled", "shipped"
    return frozenset({verb + "ed"})


def _verb_and_core(task: str) -> tuple[str | None, frozenset[str]]:
    """The item's verb ("follow" for "with Maria about ...", the follow-up wording) and its other words."""
    words = _words(task)
    if not words:
        return None, frozenset()
    verb, rest = ("follow", words) if words[0] in _FOLLOW else (words[0], words[1:])
    if verb == "follow" and rest[:1] == ["up"]:
        rest = rest[1:]
    core = frozenset(_stem(w) for w in rest if w not in _NOT_CORE and not w.isdigit() and len(w) > 1)
    return verb, core


def _shares(sentence: str, core: frozenset[str]) -> bool:
    return bool(core & {_stem(w) for w in _words(sentence)})


def _said_done(sentence: str, verb: str | None, core: frozenset[str] = frozenset()) -> tuple[bool, bool]:
    """(whether the sentence says something done in general or with `verb`, whether its object is a pronoun).

    The item's verb counts said by the speaker ("I booked the flights"), or after the item's object, as
    a passive ("the faucet is fixed", "got the dentist appointment booked")."""
    if verb is not None:
        forms = "|".join(re.escape(form) for form in sorted(past_forms(verb)))
        tail = r"(?: up)?" if verb == "follow" else ""
        for match in re.finditer(rf"\b(?:{forms}){tail}\b", sentence, re.IGNORECASE):
            if _SPEAKER.match(sentence[: match.start()]):
                return True, bool(_PRONOUN.match(sentence[match.end() :]))
            before = sentence[: match.start()]
            got = _GOT.search(before)
            if (_PASSIVE.search(before) or (got and _SPEAKER.match(before[: got.start()]))) and _shares(before, core):
                return True, False
    return bool(_DONE.search(sentence)), False


def closed_items(text: str, items: Sequence[str]) -> list[int]:
    """Indexes of the open `items` (task values) that `text` reports as done."""
    sentences = [s.strip(" ,") for s in _SENTENCES.split(text) if s and s.strip(" ,")]
    sentences = [s for s in sentences if not s.endswith("?") and not _NOT_DONE.search(s)]
    readings = [_verb_and_core(item) for item in items]
    closed = []
    for index, (verb, core) in enumerate(readings):
        for sentence in sentences:
            done, pronoun = _said_done(sentence, verb, core)
            if not done:
                continue
            alone = sum(1 for other, _ in readings if other == verb) == 1
            if (core and _shares(sentence, core)) or (pronoun and alone and verb is not None):
                closed.append(index)
                break
    return closed


def closes(text: str | None, item: str | None) -> bool:
    """Does `text` report the one open item `item` done?"""
    return bool(text and item) and closed_items(text or "", [item or ""]) == [0]


def completion(message: Message, items: Sequence[str], *, name: str | None = None) -> Candidate | None:
    """The memory a message that reports open `items` done is stored as ("The user has done the open item:
    call the dentist."), so that resolution closes them; None when it closes none. Its value is the
    message, which `closed_items` reads again when the candidate is resolved."""
    closed = closed_items(message.content, items)
    if message.role != "user" or not closed:
        return None
    subject = name or "The user"
    bodies = "; ".join(third_person_object(items[i], name).strip(" .") for i in closed)
    day = message.at.replace(hour=0, minute=0, second=0, microsecond=0)
    return Candidate(
        MemoryKind.EVENT,
        f"{subject} has done the open item: {bodies}.",
        "event",
        attribute="event",
        value=" ".join(message.content.split()),
        event_time=day,
        confidence=0.7,
        source_text=message.content,
    )


__all__ = ["closed_items", "closes", "completion", "past_forms"]
