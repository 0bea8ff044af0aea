"""Split a message into the clauses the rules read.

Each clause comes as a pair: the text with quoted passages masked (what rules match against, so
quoted words are never taken for the user's statements) and the original text at the same
offsets (what memories are worded from). Code, questions, hypotheticals and reported speech are
dropped here; greetings and discourse markers are cut off each clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .skip import (
    is_unstated,
    looks_like_code_or_error,
    question_request_length,
    recalled_statement,
    small_talk_length,
    stated_part,
)

_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|Jr|Sr|Prof|vs|etc|e\.g|i\.e|approx|No)\.$")
_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of)"
_AMOUNT_TAIL = (
    r"(?:(?:it's|it has|it is|that's)\s+(?:already\s+|now\s+|officially\s+)*been\s+(?:about\s+|almost\s+|over\s+"
    rf"|nearly\s+|just\s+)?{_COUNT}\s+(?:days?|weeks?|months?|years?)"
    rf"|{_COUNT}\s+times?\s+(?:a|per|each|every)\s+(?:day|week|month|year))(?:,?\s+(?:now|actually|already))?[\s.!]*$"
)
"""What a dash may add to the clause before it, which stays part of it: how long it has gone on ("sticking to my
tidying routine - it's already been 3 weeks!") or how often ("my gym routine - four times a week, actually")."""
_CLAUSE_SPLIT = re.compile(
    r"(?:^|,?\s+(?:and |but |so )?)(?:i'm|i am) (?:so |really |very )?(?:happy|proud|glad|pleased|excited|thrilled"
    r"|relieved) to (?:say|report|share|announce|tell you)(?: that)?\s+(?=(?:i|i'm|i've|my|we|we've)\b)"
    r"|,?\s+(?:and|but|so|because|although|though|while|plus)\s+(?=(?:i|i'm|i've|i'd|i'll|my|we|we're|our)\b)"
    r"|,\s+(?=(?:i|i'm|i've|i'd|i'll|we|we're|our)\b)|\s+[-–—]\s+(?!" + _AMOUNT_TAIL + ")"
    r"|(?:,?\s+and\s+|,\s+)(?=(?:just |finally |also |then )?(?:moved|started|switched|joined|quit|left|bought|booked"
    r"|finished|passed|graduated|adopted|signed)\b)"
    r"|,\s+(?=(?:just |finally |also )?got\b)"
    r"|,?\s+(?:but |and |so )?(?:i )?(?:just )?(?:wanted|want) to (?:let you know|tell you|share|say)(?: that)?\s+"
    r"(?=(?:i|i'm|i've|my|we|we've)\b)"
    r"|,?\s+(?:especially|particularly|mostly) (?:(?:the part |the bit )where|since|now that)\s+"
    r"(?=(?:i|i'm|i've|we|we're|we've)\b)",
    re.IGNORECASE,
)
_NOUN_PHRASE_ONLY = re.compile(r"(?:(?:my|our|the|his|her|their) )?[\w'-]+(?: [\w'-]+)?", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"(?:(?:just|only|also|so|and|but|well|oh|actually|honestly|anyway|btw|by the way|guess what|update|news|"
    r"last|this|next|early|late|on|in|at|since|over|the other|a few|two|three|few|couple of|earlier|"
    r"yesterday|today|tonight|tomorrow|recently|lately|finally|these days|nowadays|this morning|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|week|weekend|month|year|days?|weeks?|months?|years?|ago|"
    r"morning|afternoon|evening|night)\b[\s,]*){1,4}",
    re.IGNORECASE,
)
"""A short opening that belongs to the clause after it ("Yesterday, I went ...", "Last weekend, we ...")."""
_REQUEST_PREFIX_ONLY = re.compile(
    r"(?:please )?(?:remember|note|keep in mind|bear in mind|don't forget|do not forget|for (?:future|your) "
    r"reference|for the record|just so you know|fyi|save this|store this)[\s:,\-]*",
    re.IGNORECASE,
)


def readable_clauses(text: str) -> Iterator[tuple[str, str]]:
    """(masked, original) pairs for the clauses of `text` that may state something about the user."""
    for sentence in readable_sentences(text):
        yield from sentence


def readable_sentences(text: str) -> Iterator[list[tuple[str, str]]]:
    """The readable clauses of `text` (see `readable_clauses`), grouped by the sentence they belong to."""
    normalized = normalize(text.replace("\r", ""))
    if not normalized or looks_like_code_or_error(text):
        return
    masked = mask_quotes(normalized)
    for sentence_masked, sentence in _statement_sentences(masked, normalized):
        clauses = list(_clause_bodies(sentence_masked, sentence))
        if clauses:
            yield clauses


def normalize(text: str) -> str:
    """Straight quotes and single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())


def mask_quotes(text: str) -> str:
    """Replace quoted passages by underscores (same length): quoted words are not the user's statements."""

    def blank(match: re.Match[str]) -> str:
        return match.group(0)[0] + "_" * (len(match.group(0)) - 2) + match.group(0)[-1]

    text = re.sub(r'"[^"]*"', blank, text)
    return re.sub(r"(?<![\w])'[^']*'(?![\w])", blank, text)


def sentences(text: str) -> Iterator[str]:
    """The sentences of `text`, split at ".", "!", "?", ";" and line breaks (not after "Dr." and kin)."""
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


def clauses(sentence: str) -> list[str]:
    """Split at clause boundaries ("..., and I ..."); never inside "my colleagues and I" or after "Note:"."""
    pieces: list[str] = []
    cursor = 0
    for boundary in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[cursor : boundary.start()].strip()
        joined_subject = boundary.group(0).strip(", ").casefold() == "and" and _NOUN_PHRASE_ONLY.fullmatch(left)
        lead_in = boundary.group(0).startswith(",") and _LEAD_IN.fullmatch(left)
        subordinator_kept = left.casefold() in ("even", "only")  # "Even though I ...": one subordinate clause
        if not left and boundary.start() == 0:
            cursor = boundary.end()  # an opening that only announces the clause ("I'm happy to say that I ...")
            continue
        if not left or joined_subject or lead_in or subordinator_kept or _REQUEST_PREFIX_ONLY.fullmatch(left):
            continue
        pieces.append(left)
        cursor = boundary.end()
    pieces.append(sentence[cursor:].strip())
    return [piece for piece in pieces if piece]


def _located(pieces: Iterable[str], text: str) -> Iterator[tuple[str, int]]:
    """Each piece with its offset in `text` (pieces come in order and do not overlap)."""
    cursor = 0
    for piece in pieces:
        start = text.index(piece, cursor)
        cursor = start + len(piece)
        yield piece, start


def _statement_sentences(masked: str, original: str) -> Iterator[tuple[str, str]]:
    """Sentences of the masked text that state something, with the matching slices of the original; of a
    sentence that also asks or supposes something, the statement in it (`skip.stated_part`)."""
    for sentence, start in _located(sentences(masked), masked):
        if not is_unstated(sentence):
            yield sentence, original[start : start + len(sentence)]
            continue
        part, recalled = stated_part(sentence), recalled_statement(sentence)
        for span in (part, recalled if recalled and (part is None or recalled[0] >= part[1]) else None):
            if span is not None:
                yield sentence[span[0] : span[1]], original[start + span[0] : start + span[1]]


_DROPPED_I = re.compile(
    r"^(?:(?:just|finally|recently|also|actually|officially|literally) )*(?:got|had|went|moved|started|finished|passed|"
    r"graduated|joined|left|quit|bought|sold|booked|adopted|ran|won|met|took|made|visited|flew|drove|spent|signed|"
    r"launched|decided|switched|traded|swapped|replaced|became|began|turned|landed|married|completed|earned|submitted|"
    r"applied|received|built|"
    r"wrote|fixed|painted|learned|learnt|hiked|celebrated|hosted|attended|volunteered|organi[sz]ed|stopped|"
    r"(?:love|hate|adore|enjoy|can't stand|cannot stand)(?= [a-z]+ing\b)|prefer|live in|work (?:at|for|as)|"
    r"speak|need to|have to|used to)\b",
    re.IGNORECASE,
)
_GERUND_SUBJECT = re.compile(r"^[a-z]+ing\b[^,;]*?\b(?:is|was|are|were|'s|has been|can be|makes|made)\b", re.I)
_DROPPED_I_HAVE = re.compile(
    r"^(?:(?:never|always|just|recently|finally|also) )?(?:been|gotten)\b"
    r"(?! (?:a|an|the|such|ages|forever|hectic|crazy|nuts|wild|rough|tough|quiet|slow)\b)",
    re.IGNORECASE,
)
"""A dropped "I've" ("Been busy lately"), not a dropped "It's" ("Been a long road", "Been hectic for me")."""
_DROPPED_I_ADVERB_PAST = re.compile(
    r"^(?:just|finally|recently|also|actually|officially) (?!(?:excited|tired|bored|interested|worried|scared"
    r"|stressed|obsessed|exhausted|thrilled|pleased|relieved|amazed|surprised|shocked|confused|annoyed|checked"
    r"|asked|looked|googled|confirmed|called|texted|emailed|messaged|replied|answered|realized|realised|remembered"
    r"|noticed|wondered|tried|wanted|needed)\b)"
    r"(?:[a-z]{3,}ed|paid|sold|won|lost|bought|caught|found|hit|broke|began|wore|ate|drank|met|ran|swam"
    r"|built|wrote|taught|held|kept|sent|spent|threw|grew|drew|flew|rode|sang|gave|took|made|did|got)\b",
    re.IGNORECASE,
)
"""A dropped "I" before an adverb and a past tense ("Finally handed in my thesis"), not before a feeling
("Just excited to be here") or an errand within the talk ("Just checked, the store closes at 9")."""
_DROPPED_I_PAST_MY = re.compile(
    r"^(?!(?:excited|tired|bored|interested|worried|scared)\b)[a-z]{3,}ed (?:my|our)\b", re.I
)
"""A past tense before "my" ("Aced my driving test"): a dropped "I"."""
_DROPPED_I_AM_NOW = re.compile(
    r"^(?:currently|still|now|also|just) (?:reading|watching|studying|saving up|playing|listening to|using)\b", re.I
)
"""A dropped "I'm" before an activity said to be going on ("Currently reading ..."); without the adverb
the gerund may be the subject ("Reading before bed helps me ...")."""
_DROPPED_I_AM = re.compile(
    r"^(?:(?:currently|still|now|also|just) )*(?:working on|building|learning|training for|planning|heading|flying"
    r"|no longer"
    r"|moving|back from|home from|"
    r"starting|leaving|going to(?! be (?:a|an|the|so|such)\b)|gonna(?! be (?:a|an|the|so|such)\b)"
    r"|not (?:a|an|really|into|vegan|vegetarian|working|living)|allergic|"
    r"based in|originally from|married|engaged|pregnant)\b",
    re.IGNORECASE,
)


def implied_subject(masked: str, original: str) -> tuple[str, str]:
    """The clause with the "I" chat often leaves out put back ("Moved to Denver in January" ->
    "I moved to Denver in January", "Been busy ..." -> "I've been busy ...", "Not vegan anymore" ->
    "I'm not vegan anymore"), the same prefix on both texts so that their offsets still agree."""
    if _GERUND_SUBJECT.match(masked):
        return masked, original  # "Learning another language is tough": the gerund is the subject
    dropped = (
        (_DROPPED_I, "I "),
        (_DROPPED_I_ADVERB_PAST, "I "),
        (_DROPPED_I_PAST_MY, "I "),
        (_DROPPED_I_HAVE, "I've "),
        (_DROPPED_I_AM, "I'm "),
        (_DROPPED_I_AM_NOW, "I'm "),
    )
    for pattern, prefix in dropped:
        if pattern.match(masked):
            lowered = masked[:1].lower() + masked[1:], original[:1].lower() + original[1:]
            return prefix + lowered[0], prefix + lowered[1]
    return masked, original


def _clause_bodies(masked: str, original: str) -> Iterator[tuple[str, str]]:
    """Clauses of one sentence, without small talk and without a polite request's question wrapper."""
    for clause, start in _located(clauses(masked), masked):
        body_masked = clause[small_talk_length(clause) :].strip()
        if not body_masked:
            continue
        body_start = masked.index(body_masked, start)
        body_original = original[body_start : body_start + len(body_masked)]
        wrapper = question_request_length(body_masked)
        if wrapper:
            body_masked = body_masked[wrapper:].rstrip("?").strip()
            body_original = body_original[wrapper:].rstrip("?").strip()
        after_dash = re.search(r"[-–—]\s*$", masked[:start])
        yield (body_masked, body_original) if after_dash else implied_subject(body_masked, body_original)
