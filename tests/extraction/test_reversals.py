"""Reversals the rules read: a diet given up or taken up again, a new manager; and which memories an LLM
may retire for a statement about what the user eats (`extraction.diet`)."""

from __future__ import annotations

import pytest

from memstrata.extraction.diet import contradicts, stances, topics
from memstrata.extraction.resolution import DecisionKind, validate_llm_decision
from tests.extraction.test_resolution import candidate_from, resolve, stored


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("Tom is my new manager", "Tom"),
        ("my new boss is Dana", "Dana"),
        ("I have a new manager, Tom", "Tom"),
        ("We've got a new boss: Priya", "Priya"),
        ("I got a new boss named Dana", "Dana"),
        ("Dana is my boss now", "Dana"),
    ],
)
def test_a_new_manager_is_the_manager_slot(said: str, value: str) -> None:
    candidate = candidate_from(said)
    assert (candidate.attribute, candidate.value, candidate.polarity) == ("relation:manager", value, 1)


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("I started eating meat again", "meat"),
        ("I eat meat again these days", "meat"),
        ("honestly I went back to eating chicken", "chicken"),
        ("I've started eating red meat again", "red meat"),
        ("we eat fish now", "fish"),
    ],
)
def test_eating_a_food_again_is_a_diet_stance(said: str, value: str) -> None:
    candidate = candidate_from(said)
    assert (candidate.attribute, candidate.value, candidate.polarity) == ("diet", value, 1)


def test_eating_something_that_names_no_food_is_no_diet() -> None:
    assert candidate_from("I started eating healthier again").attribute != "diet"


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("I started eating meat again", "I'm vegetarian."),
        ("I eat meat again these days", "I am a vegetarian"),
        ("I'm not vegetarian anymore", "I'm vegetarian."),
        ("honestly I went back to eating fish", "I'm vegan"),
        ("I started eating chicken again", "I don't eat meat"),
        ("Tom is my new manager", "My manager is Bob."),
        ("my new boss is Dana", "my boss is Sam"),
    ],
)
def test_a_reversal_retires_what_it_reverses(new: str, old: str) -> None:
    decision = resolve(new, old)
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("m0",))


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("I eat meat again these days", "I don't eat pork"),  # not eating pork says nothing against meat
        ("I've started eating fish again", "I'm pescatarian"),  # a pescatarian eats fish
        ("I'm vegetarian.", "I love steak"),  # a taste is not a diet: only a model may judge it retired
        ("I started eating meat again", "I love tea."),
        ("Tom is my new manager", "My sister is Ana."),
    ],
)
def test_the_rules_keep_what_a_reversal_does_not_reverse(new: str, old: str) -> None:
    assert resolve(new, old).kind is DecisionKind.ADD


def test_stances_of_diets_and_foods() -> None:
    assert stances("vegetarian", 1, eating=True) == {("vegetarian", 1), ("meat", -1), ("fish", -1)}
    assert stances("vegetarian", -1, eating=True) == {("vegetarian", -1)}  # a diet given up says nothing else
    assert stances("beef", 1, eating=True) == {("beef", 1), ("meat", 1)}
    assert stances("beef", 1, eating=False) == {("beef", 1)}  # liking beef is not eating it
    assert stances("no pork", 1, eating=True) == {("pork", -1)}
    assert contradicts(stances("beef", 1, eating=True), stances("vegan", 1, eating=True))
    assert not contradicts(stances("no pork", 1, eating=True), stances("meat", 1, eating=True))
    assert topics("The user loves steak.") == {"meat"} and topics("The user is plant-based.") >= {"meat", "dairy"}
    assert topics("The user loves tea.") == frozenset()


def test_the_llm_may_retire_a_taste_its_diet_statement_contradicts() -> None:
    new = candidate_from("I'm vegetarian, I no longer eat meat")
    existing = [stored("steak", "I love steak", against=new), stored("tea", "I love tea.", against=new)]
    decision = validate_llm_decision({"action": "SUPERSEDE", "index": 0}, new, existing, retracted=("eat meat",))
    assert (decision.kind, decision.target_ids) == (DecisionKind.SUPERSEDE, ("steak",))
    refused = validate_llm_decision({"action": "SUPERSEDE", "index": 1}, new, existing, retracted=("eat meat",))
    assert refused.kind is DecisionKind.ADD and "tea" in refused.reason


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("I'm vegetarian.", "I work at Acme."),
        ("I'm vegetarian.", "I love jazz."),
        ("I love bacon.", "I love steak"),  # two tastes of one many-valued slot: a new one leaves the old
        ("I live in Berlin.", "I love steak"),
    ],
)
def test_the_llm_may_not_retire_what_shares_no_topic(new: str, old: str) -> None:
    candidate = candidate_from(new)
    existing = [stored("old", old, against=candidate)]
    assert validate_llm_decision({"action": "SUPERSEDE", "index": 0}, candidate, existing).kind is DecisionKind.ADD
