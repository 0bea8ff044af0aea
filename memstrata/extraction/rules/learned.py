"""The learned path: a clause no rule stored, kept when the store-worthiness model says so.

The general path (`self_statements`) keeps a first-person clause only when no linguistic category
refuses it; on chat written by others most store-worthy clauses fall into a category on purpose kept
broad ("Losing my job was hard", "Dance gives me an escape", "I cherish time with family"). Here such a
clause is scored by `..worthiness` and stored as said, in the third person, when its probability
reaches the model's threshold. A hard refusal is never overridden: a question, a request to the
assistant, a clause about the assistant or about this very conversation. The model may also drop a
statement the general path would keep when it finds it very unlikely to be worth keeping
(`Weights.drop_below`; 0 keeps every one).
"""

from __future__ import annotations

from ..base import Candidate
from ..skip import is_question
from ..worthiness import HARD_REFUSALS, SHIPPED, StoreWorthiness, read
from .clause import Clause
from .self_statements import stated


def learned_statement(ctx: Clause, model: StoreWorthiness = SHIPPED) -> list[Candidate]:
    """The clause as a statement when the model finds it store-worthy; [] when it does not or when a
    hard reason refuses it."""
    reading = read(ctx.clause)
    if reading.reason in HARD_REFUSALS or is_question(ctx.clause):
        return []
    p = model.probability(ctx.clause, ctx.original, reading)
    if p < model.weights.threshold:
        return []
    return stated(ctx, reading.start or 0, checked=False, confidence=round(0.5 * p, 2))


def kept_by_model(ctx: Clause, model: StoreWorthiness = SHIPPED) -> bool:
    """False when the model finds a clause the general path keeps too unlikely to be worth keeping."""
    floor = model.weights.drop_below
    return floor <= 0 or model.probability(ctx.clause, ctx.original, read(ctx.clause)) >= floor
