"""What not to store: code and stack traces, questions, hypotheticals, reported speech, small talk.

Precision comes before recall: a sentence these checks reject yields nothing, however much it
looks like a statement ("What if I lived in Paris?", "She said she works at Google").
"""

from __future__ import annotations

import re

_CODE_OR_ERROR = re.compile(
    r"```|^\s*Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+|^\s*at [\w.$<>]+\(.*\)\s*$"
    r"|^\s*[\w.]*(?:Error|Exception|Warning)\b\s*:|^\s*(?:error|fatal|warning|panic)\b\s*[:!]|\bERR!"
    r"|\bE[A-Z]{5,}\b|^\s*(?:def|class|import|from \S+ import|function|const|let|var|#include|public|"
    r"private|return)\b.*[=(){};:]",
    re.MULTILINE,
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening|night)|thanks|thank you|thx|ty|cheers|"
    r"ok(?:ay)?|sure|great|nice|cool|perfect|awesome|got it|sounds good|lol|haha|hmm+|yes|yeah|yep|no(?! longer)|nope|"
    r"bye|goodbye|see you)\b[\s!.,:)(]*",
    re.IGNORECASE,
)
_DISCOURSE = re.compile(
    r"^(?:(?:oh|ah|also|and|so|well|btw|by the way|fyi|actually|honestly|anyway|anyways|correction|sorry|ugh|oof|omg"
    r"|yay|phew|welp|meh|"
    r"okay|ok|right|oh and|oh also|one more thing|update|quick update|ps|p\.s\.|guess what|speaking of which|"
    r"on another note|(?:i )?just wanted to (?:let you know|tell you|share|say|update you)(?: that)?|"
    r"(?:i )?wanted to (?:let you know|tell you)(?: that)?|heads up|quick heads up"
    r"|(?:it |that |this )?(?:reminds|reminded|makes|made) me (?:realize |remember )?how much(?= i\b))\b[\s,:;!\-]*)+",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:(?:what|who|whom|whose|where|when|why|how|which)(?:'s|'re|'d)?\s+(?:\w+\s+)?"
    r"(?:is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|have|has|had)\b"
    r"|(?:what|who|where|why|how)(?:'s|'re)\b"
    r"|(?!(?:have|has|had|did|do)\s+(?:my|our)\b)"  # "Had my wisdom teeth out": a dropped "I", no question
    r"(?:is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|have|has|had|isn't|"
    r"aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't)\s+(?:i|you|we|they|he|she|it|my|"
    r"your|our|the|this|that|there|these|those|anyone|someone)\b)",
    re.IGNORECASE,
)
_TAG_QUESTION = re.compile(
    r"\b(?:shouldn't|should|isn't|aren't|don't|doesn't|won't|can't|couldn't|wouldn't|didn't|right|no)"
    r"(?: (?:i|you|we|it|they|he|she))?\s*[.!]*$",
    re.IGNORECASE,
)
_QUESTION_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?(?=remind me (?:to|about|in|on|tomorrow|next)\b|remember\b"
    r"|always\b|never\b|stop\b|keep (?:your|the|it|answers|replies)\b"
    r"|(?:use|reply|respond|answer|write|talk)\b.*\b(?:from now on|going forward|in (?:the )?future)\b"
    r"|note\b"
    r"|make a note\b|keep in mind\b|save\b)",
    re.IGNORECASE,
)
"""A polite question that is really a request ("Can you remind me to ...?")."""
_HYPOTHETICAL = re.compile(
    r"\b(?:if(?! possible| you (?:can|could|need|want|like|wanna|care|ever need)| needed| it helps| that helps"
    r"| (?:that|it) matters| that's (?:ok|okay|useful|helpful|relevant)| anything| something| it's urgent| urgent"
    r"| you need me)|suppose|supposing|imagine|pretend|hypothetically|"
    r"let's say|lets say|(?<!\bto )say that|what if|wonder|wondering|maybe|perhaps|might|someday|some day|in theory|"
    r"assuming|would(?! rather| prefer| like| love)|were i|whether)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|told|tells|claims|claimed|wrote|writes|mentioned|quote|quoted|translate|translation|"
    r"the phrase|the sentence|how do i say|the protagonist|(?:my|the|a|his|her|their) character"
    r"|in (?:the|my|this|a|that) (?:novel|story|book|game|movie|film|show|script|screenplay))\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"^(?:\S+ ){0,2}?(?:it|them|this|that|these|those|him|her|one|ones)\b", re.I)
_BLOCKED_OBJECT = re.compile(
    r"^(?:(?:that|this|these|those|how|what|which|if|whether|your|yours|you|it(?! when)|them|their|his|her|"
    r"the idea|the sound of|the idea of|the look of|the thought of|when you|how you|what you|that you|"
    r"the way|the fact|the thought|all the|the look|the colou?rs?|the vibe|the design|the pic|the photo|"
    r"the picture|the painting|the energy|is|was|are|were|makes|made|has|keeps|gives|helps|means|"
    r"the sound of that|hearing (?:that|about)|seeing (?:that|this|your)|"
    r"to (?:ask|know|see|hear|say|think|check|point out|mention|add|clarify|confirm|understand|learn more|"
    r"thank|share|get your))\b|_)",
    re.I,
)


_SARCASM_MARKER = re.compile(
    r"(?:^|\s)/s\b|\U0001f644|\U0001f612|\U0001f611|\bsaid no ?(?:one|body)\b|\byeah,? right\b|\bnot!|\boh,? joy\b"
    r"|\bjust what i needed\b|\blucky me\b|\bhow fun\b|\bwhat fun\b|\bthe best\W*not\b|\boh,? great\b"
    r"|\b(?:yay|great|perfect|wonderful|lovely),? another\b|\banother [\w ]{2,40}, (?:just )?my fav(?:ou?rite)?\b",
    re.IGNORECASE,
)
_EMPHASIS = re.compile(
    r"\b(?:just|simply|sooo+|totally|absolutely) (?:love|adore|enjoy)\b|\b(?-i:LOVE|ADORE|LOVVE)\b", re.I
)
_NUISANCE = re.compile(
    r"\b(?:red-?eyes?|delay(?:s|ed)?|traffic|queues?|waiting|wait(?:ing)? in line|lines at|stuck|mondays?|"
    r"layovers?|jet ?lag|paperwork|taxes|tax season|spam|ads|adverts|commut(?:e|ing)|getting up at|waking up at|"
    r"(?:4|5|6) ?am\b|alarms?|on hold|hold music|mosquito(?:e)?s|construction|roadworks|noise|cancel(?:l)?ed|"
    r"cancel(?:l)?ations?|overtime|deadlines? on|chores|dishes|laundry|bugs|outages?|crash(?:es|ed|ing)?|"
    r"break(?:s|ing)? down|breaks|ignored|interrupted|late fees|hangovers?|sunburns?|flat tires?|migraines?|"
    r"when (?:my|the|people|someone|it) \w+ (?:late|down|wrong)|doing my taxes|being sick|meetings that)\b",
    re.IGNORECASE,
)


_DEICTIC = re.compile(
    r"\b(?:i|we)(?:'m|'ve|'ll| am| have| will)?(?: \w+){0,4}? (?:it|this|that|them|these|those|(?:a new|another) one)\b"
    r"(?! (?:weekend|week|morning|afternoon|evening|night|year|month|summer|winter|spring|fall|autumn|time|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|season|semester|term)\b)(?! (?:is|was|are|were)\b)",
    re.IGNORECASE,
)
_DEICTIC_OBJECT = re.compile(
    r"\b(?:made|make|making|got|bought|took|finished|tried|did|do|doing|painted|drew|built|baked|cooked|wrote|"
    r"found|picked|love|loved|like|liked|get|try|trying) (?:this|these|those|it|that|them)\b(?! (?:is|was|are|were)\b)"
    r"(?! (?:weekend|week|morning|afternoon|evening|night|year|month|time)\b)|\blike (?:that|this)\W*$",
    re.IGNORECASE,
)
_NOT_THE_USER = re.compile(r"^(?:it|this|that|there|they|he|she|you|which|these|those)\b(?!'s me)", re.IGNORECASE)


def leans_on_context(clause: str) -> bool:
    """True when the clause's action is done to something only the conversation shows ("I made this",
    "I'm going to try making it", "I learned that the hard way") or its subject is not the user
    ("It made me reflect ..."): such an event means nothing out of context."""
    return bool(_NOT_THE_USER.match(clause) or _DEICTIC.search(clause) or _DEICTIC_OBJECT.search(clause))


def sarcastic(text: str) -> bool:
    """True when a stated liking reads as sarcasm: an explicit marker ("/s", "said no one", an eye-roll),
    or emphasis ("just LOVE", "I ADORE") on something people put up with rather than enjoy (delays,
    red-eye flights, traffic, paperwork, 5am alarms...)."""
    low = text.casefold()
    if any(hint in low for hint in _MARKER_HINTS) and _SARCASM_MARKER.search(text):
        return True
    return any(hint in low for hint in _EMPHASIS_HINTS) and bool(_EMPHASIS.search(text) and _NUISANCE.search(text))


_MARKER_HINTS = (
    "/s",
    "\U0001f644",
    "\U0001f612",
    "\U0001f611",
    "said no",
    "right",
    "not!",
    "joy",
    "needed",
    "lucky",
    "fun",
    "not",
    "great",
    "another",
    "perfect",
    "wonderful",
    "lovely",
    "yay",
)
"""Words every sarcasm marker contains: a cheap test before the regular expression."""
_EMPHASIS_HINTS = ("love", "adore", "enjoy", "lovve")


def looks_like_code_or_error(text: str) -> bool:
    """True for code, stack traces, error messages, or text dense with code symbols."""
    if _CODE_OR_ERROR.search(text):
        return True
    symbols = sum(text.count(c) for c in "{}[]();=<>$\\|`")
    return len(text) > 20 and symbols / len(text) > 0.08


def is_question(sentence: str) -> bool:
    """True for a question: a "?", a question opening, or a closing tag ("..., isn't it")."""
    stripped = sentence.strip()
    if stripped.endswith("?") or _QUESTION_START.match(_DISCOURSE.sub("", stripped)):
        return True
    return bool(_TAG_QUESTION.search(stripped)) and "," not in stripped[-12:] and len(stripped.split()) > 3


def is_unstated(sentence: str) -> bool:
    """True when `sentence` states nothing about the user: a question, a hypothetical, reported speech.

    A polite question that is a request ("Could you remember that ...?") is not skipped.
    """
    question = is_question(sentence) and not _QUESTION_REQUEST.match(_DISCOURSE.sub("", sentence))
    return bool(question or _HYPOTHETICAL.search(sentence) or _REPORTED.search(sentence))


_CLAUSE_BOUNDARY = re.compile(
    r",\s+(?:(?:and|but|so|though|although|plus)\s+)?"
    r"|\s+(?:and|but|so)\s+(?=(?:i|i'm|i've|i'd|i'll|i was|do you|can you|could you|would you|what|how|is there"
    r"|are there|any|maybe|perhaps)\b)",
    re.IGNORECASE,
)
_FIRST_PERSON_START = re.compile(r"(?:i|i'm|i've|i'd|i'll|my|we|we're|we've|our)\b", re.IGNORECASE)


def stated_part(sentence: str) -> tuple[int, int] | None:
    """The (start, end) of the statement inside a sentence that also asks or supposes something, or None.

    A question, request or supposition after a clause boundary leaves the statement before it ("I've
    been experimenting with pasta sauces lately, and I was wondering if you have tips" -> the first
    clause; "I have a pottery class on Fridays, so maybe I'll make mugs" -> the class). A sentence that
    does not end in "?" and opens with a rhetorical question keeps the first-person statement after it
    ("What can I say, I love turtles."). A supposition in the first clause ("If I moved to Paris, I'd
    ...") leaves nothing.
    """
    head_end = None
    for boundary in _CLAUSE_BOUNDARY.finditer(sentence):
        if is_unstated(sentence[: boundary.start()]):
            break
        head_end = boundary.start()
    if head_end is not None and head_end > 0:
        return 0, head_end
    first = _CLAUSE_BOUNDARY.search(sentence)
    if first is None or sentence.rstrip().endswith("?") or not first.group(0).startswith(","):
        return None
    head, tail = sentence[: first.start()], sentence[first.end() :]
    rhetorical = is_question(head) and not _HYPOTHETICAL.search(head) and not _REPORTED.search(head)
    if rhetorical and _FIRST_PERSON_START.match(tail) and not is_unstated(tail):
        return first.end(), len(sentence)
    return None


_RECALLED = re.compile(
    r"\b(?:remind me|remember|recall)\s+(?:of\s+)?(?:when|that|what (?:day|days|time|date)(?: of the (?:week|month))?"
    r"|which (?:day|days)|how often|the (?:day|time|date)(?: when| that)?)\s+"
    r"(?P<clause>(?:(?-i:[A-Z])[a-z]+ and |my [a-z]+ and )?(?:i|i've|i'm|we)\b[^?]*)",
    re.IGNORECASE,
)


def recalled_statement(sentence: str) -> tuple[int, int] | None:
    """The (start, end) of a first-person clause the speaker asks the assistant to recall, or None.

    An adverbial question word leaves the clause whole ("Can you remind me what day Rachel and I usually
    meet for coffee?" -> "Rachel and I usually meet for coffee"; "remember when I got pre-approved for
    $400,000?"); one that stands for a missing object does not ("remind me what I need to pick up"), so
    only when / what day / what time / which day / how often / that introduce it.
    """
    found = _RECALLED.search(sentence)
    if found is None:
        return None
    clause = found.group("clause").rstrip(" ?!.")
    if not clause or _HYPOTHETICAL.search(clause) or _REPORTED.search(clause):
        return None
    return found.start("clause"), found.start("clause") + len(clause)


def _strip_greeting(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _GREETING.sub("", text, count=1).strip()
    return text


def small_talk_length(clause: str) -> int:
    """How many leading characters of `clause` are greetings and discourse markers ("Oh, thanks! Also, ")."""
    stripped = _strip_greeting(clause)
    offset = len(clause) - len(stripped)
    lead = _DISCOURSE.match(stripped)
    if lead:
        offset += lead.end()
    return offset


def question_request_length(clause: str) -> int:
    """How many leading characters of `clause` are a polite request's question wrapper ("Can you ")."""
    lead = _QUESTION_REQUEST.match(clause)
    return lead.end() if lead else 0


def unresolved_referent(text: str) -> bool:
    """True when the object leans on context we do not have ("seeing them", "making it")."""
    return bool(_PRONOUN.match(text.strip()))


def blocked_object(text: str) -> bool:
    """True when a liked/wanted "object" is a reaction to the conversation, not a taste ("that you ...")."""
    return bool(_BLOCKED_OBJECT.match(text))
