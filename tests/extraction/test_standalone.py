"""Memories that lean on the conversation are dropped; memories that stand alone are kept (issue 30).

Each rule of `extraction.standalone` is tested on its own with memories written for these tests (not
taken from any data set), each with counter-examples that must still stand, and through the extractor
on whole messages.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.standalone import (
    applies,
    bare_definite,
    bare_indefinite,
    context_reason,
    no_predicate,
    stands_alone,
    unresolved_pronoun,
)
from memstrata.models import MemoryKind

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)


def contents(text: str) -> list[str]:
    return [c.content for c in RuleExtractor().extract([Message(role="user", content=text, at=AT)])]


@pytest.mark.parametrize(
    "memory",
    [
        "The user has been using it every day.",
        "The user thinks he is right about the schedule.",
        "The user bought these for the party.",
        "The user finally finished this thing.",
        "The user met a lot of people at that event.",
    ],
)
def test_pronoun_without_antecedent(memory: str) -> None:
    assert unresolved_pronoun(memory)
    assert context_reason(memory) == "pronoun"


@pytest.mark.parametrize(
    "memory",
    [
        "The user loves it when their kids visit on Sundays.",  # "it" points forward
        "The user bought a red kayak and paddles it every weekend.",  # antecedent in the memory
        "The user moved to Porto in 2021, and it has been wonderful.",  # "it" stands for the clause before
        "The user's sister Ana had her second baby in May.",  # "her": Ana
        "The user has been baking bread this week.",  # a time, not a pointer
        "The user is reading this novel about lighthouse keepers.",  # introduced by the memory itself
        "The user goes running with their brother, and he keeps the pace.",
    ],
)
def test_pronoun_with_antecedent_or_pointing_forward_stands(memory: str) -> None:
    assert not unresolved_pronoun(memory)


@pytest.mark.parametrize(
    "memory",
    [
        "The user remembers the instructor was patient.",
        "The user did not like the texture.",
        "The user has been exploring the subgenre.",
        "The user loved the choreography and the costumes.",
    ],
)
def test_bare_definite_needs_the_conversation(memory: str) -> None:
    assert bare_definite(memory)
    assert context_reason(memory) == "definite"


@pytest.mark.parametrize(
    "memory",
    [
        "The user goes to the gym three times a week.",  # shared by everyone
        "The user takes the kids to school by bike.",
        "The user plays the piano on weekends.",
        "The user visited the museum of modern art in Lisbon.",  # restricted by "of ..."
        "The user liked the ending of the novel they wrote.",
        "The user volunteers at the animal shelter on Saturdays.",  # a modifier says which
        "The user climbed the Matterhorn in 2019.",  # a name
        "The user kept the receipts the user got in Tokyo.",  # a relative clause
        "The user has watched the series 'Dark' twice.",  # an apposition
    ],
)
def test_shared_restricted_or_named_definites_stand(memory: str) -> None:
    assert not bare_definite(memory)


@pytest.mark.parametrize(
    "memory",
    [
        "The user helped with getting everything ready.",
        "The user gave some to the neighbours.",
        "The user will keep trying, whatever happens.",
        "The user has been working on a new project lately.",
        "The user finally finished something.",
    ],
)
def test_open_indefinites_and_placeholders(memory: str) -> None:
    assert bare_indefinite(memory)
    assert context_reason(memory) == "indefinite"


@pytest.mark.parametrize(
    "memory",
    [
        "The user loves everything about Japanese gardens.",
        "The user knows everyone at the climbing club.",
        "The user bought some tomatoes at the market.",
        "The user has been working on a project to restore old radios.",
        "Everyone's favourite dish at the user's table is the lasagne.",
    ],
)
def test_restricted_indefinites_stand(memory: str) -> None:
    assert not bare_indefinite(memory)


@pytest.mark.parametrize(
    ("memory", "reason"),
    [
        ("The user loves having the assistant around.", "listener"),
        ("The user wants to tell you about their week.", "listener"),
        ("The user found the tips very useful.", "listener"),
        ("The user is always happy to help with recipes.", "listener"),
        ("The user needs to clarify that.", "listener"),
        ("The user does not understand why the tax rules changed.", "reaction"),
        ("Here's a sketch the user drew.", "pointer"),
        ("The user felt calm just sitting there.", "pointer"),
        ("The user repainted the fence, speaking of.", "pointer"),
        ("The user met people with similar stories.", "comparison"),
        ("The user liked the other players.", "comparison"),
        ('The user said it "changed everything.', "fragment"),
        ("The user's blue bike, red bike, and an old tandem.", "fragment"),
        ("The user's winter boots for snowy days.", "fragment"),
    ],
)
def test_other_reasons(memory: str, reason: str) -> None:
    assert context_reason(memory) == reason


@pytest.mark.parametrize(
    "memory",
    [
        "The user's daughter started kindergarten in September.",
        "The user's old car broke down on the motorway in May.",
        "The user's sister and the user went hiking in the Alps.",
        "The user's new bike, which the user bought in May, was stolen.",
        "The user has always been there for their younger brother.",
        "The user went on another camping trip with their cousins.",
        "The user has a lot of books to choose from.",
        "The user volunteers at the shelter Maria runs at.",
        "The user has been sleeping badly since their move to Oslo.",
        "The user is allergic to peanuts.",
        "The user understands Portuguese well.",
    ],
)
def test_standalone_memories_have_no_reason(memory: str) -> None:
    assert context_reason(memory) is None


def test_fragment_needs_a_possessed_subject_without_a_verb() -> None:
    assert no_predicate("The user's commuter bike for daily rides.")
    assert not no_predicate("The user's commuter bike was stolen from the station.")
    assert not no_predicate("The user is riding their commuter bike for daily rides.")


def _candidate(content: str, category: str, attribute: str | None) -> Candidate:
    return Candidate(kind=MemoryKind.FACT, content=content, category=category, attribute=attribute)


def test_only_free_worded_memories_are_asked() -> None:
    assert applies(_candidate("The user has been using it.", "identity", "statement"))
    assert not applies(_candidate("Remind the user about it.", "request", "task"))
    assert not applies(_candidate("Always answer the user in French.", "instruction", None))
    assert not applies(_candidate("The user lives in the city.", "identity", "location"))
    assert stands_alone(_candidate("The user lives in it.", "identity", "location"))
    assert not stands_alone(_candidate("The user has been using it.", "identity", "statement"))


def test_a_task_keeps_its_own_definites() -> None:
    task = _candidate("The user needs to book the hotel before the wedding.", "open_item", "task")
    assert stands_alone(task)
    assert not stands_alone(_candidate("The user needs to finish it.", "open_item", "task"))


@pytest.mark.parametrize(
    "text",
    [
        "I remember the organizer was really friendly.",
        "I've been trying to get the crust right with my oven.",
        "I'm thinking of using some baskets to keep everything tidy.",
        "Thanks, I love having you around!",
        "I'm always happy to share baking tips.",
    ],
)
def test_extractor_drops_memories_that_lean_on_the_talk(text: str) -> None:
    assert contents(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love it when my kids visit on Sundays.", "The user loves it when their kids visit on Sundays."),
        ("I go to the gym three times a week.", "gym"),
        ("I've been volunteering at the animal shelter since 2020.", "animal shelter"),
        ("I'm allergic to shellfish.", "shellfish"),
        ("I adopted a rescue greyhound named Pixel last month.", "greyhound"),
    ],
)
def test_extractor_keeps_memories_that_stand_alone(text: str, expected: str) -> None:
    assert any(expected in memory for memory in contents(text))


def test_a_dated_occasion_may_open_the_memory() -> None:
    assert not bare_definite("The launch is on 10 April 2026.", dated_subject=True)
    assert bare_definite("The launch is on 10 April 2026.")
    assert bare_definite("The user loved the venue.", dated_subject=True)


def test_a_circumstance_of_a_memory_about_a_name_or_number_stands() -> None:
    assert not bare_definite("The user will be in Lisbon for the conference.")
    assert not bare_definite("The user ran 12 km before the storm.")
    assert bare_definite("The user will be away for the conference.")
    assert bare_definite("The user told Sam the venue was too small.")  # an argument, not a circumstance
