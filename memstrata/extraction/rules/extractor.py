"""`RuleExtractor`: messages -> clauses -> rules -> de-duplicated candidates."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache, partial

from ..base import Candidate, Message
from ..disclosure import disclosure_start, hedged, is_thin
from ..segment import mask_quotes, normalize, readable_sentences
from ..skip import looks_like_code_or_error, sarcastic
from ..standalone import stands_alone
from ..worthiness import SHIPPED, StoreWorthiness
from .clause import Clause
from .events import event_rules
from .identity import identity_rules
from .learned import asks_the_assistant, learned_statement
from .milestones import milestone_rules
from .open_items import open_item_rules
from .others import other_people_rules
from .possessions import clefted, liked_by_the_speaker, owned, possession_candidates
from .preferences import preference_rules
from .projects import project_rules
from .relations import relation_rules
from .requests import request_rules
from .routines import routine_rules
from .self_statements import self_statement_rules
from .updates import update_rules


class RuleExtractor:
    """Offline `Extractor`: regular-expression rules over user messages.

    Assistant and system messages are skipped unless `include_assistant=True` (then an assistant
    message is read only for explicit "remember"/"note" requests, never for facts). `worthiness` is the
    store-worthiness model of the learned path (`learned`); None runs the rules alone.
    """

    name = "rules"

    def __init__(self, *, include_assistant: bool = False, worthiness: StoreWorthiness | None = SHIPPED) -> None:
        self.include_assistant = include_assistant
        self.worthiness = worthiness

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        found: list[Candidate] = []
        name = known_name
        for message in messages:
            if message.role != "user":
                continue
            speaker = message.speaker or name
            for candidate in self.extract_text(message.content, at=message.at, name=speaker):
                found.append(candidate)
                if _names_the_user(candidate) and not message.speaker:
                    name = candidate.value
        return _dedupe(found)

    def extract_text(self, text: str, *, at: datetime, name: str | None = None) -> list[Candidate]:
        """Candidates from one user message's text.

        The specific rules read every clause; a clause they do not read may still be a first-person
        statement, kept as said (`self_statements`), or a clause the store-worthiness model keeps
        (`learned`; not in a message that asks the assistant for something), unless it follows a clause
        of the same sentence that a rule read: such a clause mostly explains or qualifies it ("Text me, I
        never check email"). A free-worded memory that leans on the conversation is dropped, whichever
        path read it (`standalone.stands_alone`: "The user remembers the facilitator was kind").
        """
        found: list[Candidate] = []
        # Whether the message asks the assistant for something is worked out once, and only when a clause
        # reaches the model: most messages have none that does.
        asks = cache(partial(asks_the_assistant, text))
        for step in clause_steps(text, at=at, name=name):
            produced = step.specific or (general_path(step.ctx, self.worthiness, asks) if step.open else [])
            found.extend(c for c in produced if stands_alone(c))
        name = name or next((c.value for c in found if _names_the_user(c)), None)
        return found + _possessions(text, at, name, found)


@dataclass(frozen=True, slots=True)
class ClauseStep:
    """One clause as the extractor reads it: what the specific rules stored from it, and whether it is
    open to the general and learned paths (nothing stored, and no clause before it in its sentence was
    read by a rule)."""

    ctx: Clause
    specific: list[Candidate]
    open: bool


def clause_steps(text: str, *, at: datetime, name: str | None = None) -> Iterator[ClauseStep]:
    """The clauses of `text` in order, each with the specific rules' candidates (the units the
    store-worthiness model is trained on, `bench.train_disclosure`)."""
    for sentence in readable_sentences(text):
        explained = False
        for masked, original in sentence:
            ctx = Clause(clause=masked, original=original, at=at, name=name)
            produced = _clause_candidates(ctx)
            yield ClauseStep(ctx, produced, open=not produced and not explained)
            explained = explained or bool(produced)
            name = next((c.value for c in produced if _names_the_user(c) and name is None), name)


def general_path(
    ctx: Clause, model: StoreWorthiness | None, message_asks: Callable[[], bool] = lambda: False
) -> list[Candidate]:
    """A clause no specific rule read: a first-person statement the categories let through, else one the
    store-worthiness model keeps (none without a model, none in a message that `message_asks` the
    assistant for something)."""
    kept = self_statement_rules(ctx) or liked_by_the_speaker(ctx) or clefted(ctx)
    if kept or model is None:
        return kept
    return learned_statement(ctx, model, message_asks=message_asks)


def _possessions(text: str, at: datetime, name: str | None, found: list[Candidate]) -> list[Candidate]:
    """Specific things the message calls the speaker's own ("my 2018 Honda Civic"), in any sentence,
    questions and requests included, unless a memory from it already names them."""
    if not _NAMED_POSSESSION.search(text) or looks_like_code_or_error(text):
        return []
    plain = normalize(text)
    ctx = Clause(clause=mask_quotes(plain), original=plain, at=at, name=name)
    return [c for c in possession_candidates(ctx.clause, ctx) if not any(owned(c) in f.content for f in found)]


_NAMED_POSSESSION = re.compile(r"\bmy (?:[A-Z0-9])")
"""A cheap test before `_possessions` reads a message: "my" before a capital or a digit."""


def _names_the_user(candidate: Candidate) -> bool:
    return candidate.attribute == "name" and candidate.category == "identity"


def _clause_candidates(ctx: Clause) -> list[Candidate]:
    """A request's candidates, else open items, else statements (facts, preferences, events)."""
    requested = request_rules(ctx, _statement_candidates)
    if requested is not None:
        return requested
    tasks = open_item_rules(ctx)
    if tasks:
        return tasks
    return _statement_candidates(ctx)


def _statement_candidates(ctx: Clause) -> list[Candidate]:
    """Updates, identity, relation, preference and routine candidates; an event (a dated one, else a
    milestone) only when none of them blocks it; else facts about other people (an event that names
    someone already lists them among its entities).

    Naming a relative ("my friend Kofi ...") does not stop the rest of the clause being an event. A
    routine ("every Friday I ...", "I've been using X for 6 months") is never also a dated event, a habit
    or a project, and an identity statement ("I've been working as a teacher for ten years") is no routine.
    An event or routine needs words that make it specific ("We had a great time last weekend" is none) and
    a clause stated as a fact, not asked, hedged or mused about (`disclosure.hedged`).
    """
    found = update_rules(ctx) + identity_rules(ctx)
    if sarcastic(ctx.original):
        return found + relation_rules(ctx)  # "oh great, another Monday meeting": no liking, routine nor event
    found += [] if found else project_rules(ctx)
    routines = [] if found else routine_rules(ctx)
    routines = [] if routines and _not_yet_a_fact(ctx.clause) else routines
    found += relation_rules(ctx)
    found += [c for c in preference_rules(ctx) if not (routines and c.attribute == "habit") and _whole(c)]
    blocking = [c for c in found if c.category != "relation" or (c.attribute or "").startswith("birthday:")]
    if routines:
        return found + routines
    events = [] if blocking else event_rules(ctx) or milestone_rules(ctx)
    events = [] if events and _not_yet_a_fact(ctx.clause) else events
    return found + (events or other_people_rules(ctx))


_EARLIER_REFERENT = re.compile(r"\b(?:it|they|them|he|she|him|her|this|these|those)\b", re.IGNORECASE)


def _whole(candidate: Candidate) -> bool:
    """False for a liking whose object points back at the conversation ("the warm tone it provides")."""
    return candidate.attribute != "likes" or not _EARLIER_REFERENT.search(candidate.value or "")


def _not_yet_a_fact(clause: str) -> bool:
    """A first-person clause that asks, hedges or muses ("I need help organizing my garage this weekend",
    "I'll definitely try to ...", "I've been thinking of ..."), one with no specific word ("We had a
    great time last weekend") or one about the assistant's words: no event or routine is read from it."""
    start = disclosure_start(clause)
    if is_thin(clause, minimum=1) or _TO_THE_ASSISTANT.search(clause):
        return True
    return start is not None and hedged(clause[start:]) is not None


_TO_THE_ASSISTANT = re.compile(r"\b(?:your|yours)\b", re.IGNORECASE)
"""A clause about the assistant's own words ("I took your advice and ..."): a reaction within the talk."""


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str | None, str | None, str]] = set()
    unique = []
    for candidate in candidates:
        key = (candidate.category, candidate.attribute, (candidate.value or "").casefold(), candidate.content)
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique
