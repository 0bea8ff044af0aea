"""The learned path: a clause no rule stored, kept when the store-worthiness model says so.

The general path (`self_statements`) keeps a first-person clause only when no linguistic category
refuses it; on chat written by others most store-worthy clauses fall into a category on purpose kept
broad ("Losing my job was hard", "Dance gives me an escape", "I cherish time with family"). Here such a
clause is scored by `..worthiness` and stored as said, in the third person, when its probability
reaches the model's threshold. A hard refusal is never overridden (`out_of_reach`): a question, a
request to the assistant, a clause about the assistant or this very conversation, sarcasm, a clause not
yet a fact (a modal, musing: `disclosure.hedged`) or one that leans on words said before it
(`disclosure.refusal`'s "context": "I made this apple pie too").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..base import Candidate
from ..disclosure import hedged, is_thin, passing, without_evaluation
from ..skip import is_question, sarcastic
from ..worthiness import HARD_REFUSALS, SHIPPED, Reading, StoreWorthiness, read
from .clause import Clause
from .self_statements import stated


def learned_statement(
    ctx: Clause, model: StoreWorthiness = SHIPPED, *, message_asks: Callable[[], bool] = lambda: False
) -> list[Candidate]:
    """The clause as a statement when the model finds it store-worthy; [] when it does not, when a
    hard reason refuses it (`out_of_reach`) or when its message asks the assistant for something
    (`message_asks`, `asks_the_assistant` of the whole message: asked last, only for a clause that
    would otherwise be scored). The checks run cheapest first and each once; the embedding, the one
    costly step, only for a clause that passed them all (about 1 in 5 of the clauses asked on LoCoMo)."""
    if _names_no_fact(ctx.clause):
        return []
    reading = read(ctx.clause)
    if _out_of_reach_as_read(ctx.clause, reading) or message_asks():
        return []
    p = model.probability(ctx.clause, ctx.original, reading, reachable=True)
    if p < model.weights.threshold:
        return []
    return stated(ctx, reading.start or 0, checked=False, confidence=round(0.5 * p, 2), trim=without_comment)


def out_of_reach(clause: str, reading: Reading) -> bool:
    """True for a clause no score may store:

    - a question, sarcasm ("Oh I just adore traffic"), a clause naming the assistant ("you", "your":
      about this talk, whatever its subject), a clause naming neither the speaker nor their own
      ("Traveling is so eye-opening": a remark), a proposal, an order to the assistant or a pointer to
      something shown in the talk ("Let's keep chasing our dreams", "Here's a photo of us"), a reaction to
      something just said ("I like the sound of that recipe");
    - a hard refusal (`worthiness.HARD_REFUSALS`: a request, the assistant, this talk, words said before),
      a modal or musing ("I'm thinking of serving the lamb"), a passing state or stretched emphasis
      ("I'm in a meeting", "I just looove spam calls": `disclosure.passing`);
    - a fragment with fewer than two specific words ("In Paris", "For me").
    """
    return _names_no_fact(clause) or _out_of_reach_as_read(clause, reading)


def _names_no_fact(clause: str) -> bool:
    """The cheapest checks, a few microseconds, and the ones that turn most clauses away (about 2 in 3
    of those the learned path is asked about on LoCoMo): no word for the speaker, "you", a proposal, an
    order, a pointer to something shown in the talk, or a reaction to something just said ("I like the
    sound of the Watermelon Basil Margarita")."""
    return (
        not _SPEAKER.search(clause)
        or bool(_YOU.search(clause))
        or bool(_IN_THE_TALK.match(clause))
        or bool(_REACTION.search(clause))
    )


def _out_of_reach_as_read(clause: str, reading: Reading) -> bool:
    """The rest of `out_of_reach` once the clause is read: a hard refusal, a fragment, a passing state,
    a modal or musing, then a question or sarcasm (dearer to check and rarely left at this point)."""
    if reading.reason in HARD_REFUSALS:
        return True
    statement = without_evaluation(clause[reading.start or 0 :])
    if is_thin(statement):
        return True
    if reading.start is not None and (passing(statement) or hedged(statement) is not None):
        return True
    return is_question(clause) or sarcastic(clause)


_SPEAKER = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|our|ours|us)\b", re.IGNORECASE)
_YOU = re.compile(r"\b(?:you|your|yours|you're|you've|you'll|you'd)\b", re.IGNORECASE)
_REACTION = re.compile(r"\b(?:like|likes|love|loves) the sound of\b", re.IGNORECASE)
_IN_THE_TALK = re.compile(
    r"^(?:please )?(?:let's|let us|here's|here is|here are|check|look at|see|take a look|tell|give|show|help|explain"
    r"|suggest|recommend|send|find|list|write|provide|generate|create|remind|describe|summari[sz]e)\b",
    re.IGNORECASE,
)


def asks_the_assistant(text: str) -> bool:
    """True for a message that asks the assistant for something ("Can you help me estimate ...?", "any
    tips?", "I'd like some ideas"): its other clauses are mostly the request's background ("I'm trying to
    finalize my budget"), which the learned path leaves to the rules."""
    return bool(_ASKS.search(text))


_ASKS = re.compile(
    r"\b(?:can|could|would|will) you\b|\bdo you (?:know|have|think|recommend|suggest)\b|\bany (?:tips|ideas|advice"
    r"|suggestions|recommendations|thoughts)\b|\b(?:recommend|suggest)\b.*\?|\bhelp me\b|\bi(?:'d| would) like\b"
    r"|\b(?:i|we) (?:need|want) (?:some |your )?(?:help|advice|tips|ideas|suggestions|recommendations)\b",
    re.IGNORECASE,
)


def without_comment(statement: str) -> str:
    """The statement without a comment on it set off by a comma or a conjunction (", it was great");
    a clause the comment pattern would cut inside its own object ("I thought it was interesting how ...",
    "a plan for getting it made into a movie") is kept whole."""
    cut = without_evaluation(statement)
    return cut if _SET_OFF.match(statement[len(cut) :]) else statement


_SET_OFF = re.compile(r"^(?:$|\s*,|\s+(?:and|but|so|plus)\b)", re.IGNORECASE)
