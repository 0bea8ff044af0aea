"""Self-disclosure that chat wraps in something else: a question after it, a recalled clause, another
subject (family, "X and I", the household's "we"), a possession named in passing, a liking whose subject
is the thing, a cleft, seasons and a clause with a past and a future date.

The sentences were written for these tests (not taken from any data set)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.dates import find_dates
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.skip import recalled_statement, stated_part

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)  # a Wednesday, in the meteorological spring


def contents(text: str, *, speaker: str | None = None) -> list[str]:
    message = Message(role="user", content=text, at=AT, speaker=speaker)
    return [c.content for c in RuleExtractor().extract([message])]


def extract(text: str) -> list[Candidate]:
    return RuleExtractor().extract([Message(role="user", content=text, at=AT)])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "I've been brewing my own kombucha for a year, and I was wondering if you know a good flavour combo?",
            "The user has been brewing their own kombucha for a year.",
            id="statement-then-question",
        ),
        pytest.param(
            "I keep two beehives in the garden, any tips for the winter?",
            "The user keeps two beehives in the garden.",
            id="statement-then-request",
        ),
        pytest.param(
            "Honestly, I have a standing tennis match on Thursdays, so maybe I'll skip the gym.",
            "The user has a standing tennis match on Thursdays.",
            id="statement-then-supposition",
        ),
        pytest.param("What can I say, I love sourdough baking.", "The user loves sourdough baking.", id="rhetorical"),
    ],
)
def test_the_statement_of_a_sentence_that_also_asks_is_kept(text: str, expected: str) -> None:
    assert expected in contents(text)


@pytest.mark.parametrize(
    "text",
    [
        "If I moved to Porto, would I need a car?",
        "Do you think I should learn the cello?",
        "What if I quit my job, could I afford it?",
        "How many stars do I need for gold?",
    ],
)
def test_questions_and_suppositions_alone_store_nothing(text: str) -> None:
    assert contents(text) == []


def test_stated_part_spans() -> None:
    sentence = "I run a book club, do you have any picks?"
    assert stated_part(sentence) == (0, len("I run a book club"))
    assert stated_part("If I had time, I'd learn Italian.") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Can you remind me what day Priya and I usually go climbing?",
            "Priya and the user usually go climbing.",
            id="what-day-co-subject",
        ),
        pytest.param(
            "Remember when I got my first paycheck from Spotify?",
            "The user got their first paycheck from Spotify.",
            id="remember-when",
        ),
    ],
)
def test_a_clause_the_speaker_asks_to_be_reminded_of_is_a_statement(text: str, expected: str) -> None:
    assert expected in contents(text)


def test_a_recalled_clause_with_a_missing_object_is_not_read() -> None:
    assert recalled_statement("Can you remind me what I need to pick up from the pharmacy?") is None
    assert contents("Can you remind me what I need to pick up from the pharmacy?") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("My sister just had a baby girl.", "The user's sister just had a baby girl.", id="kin"),
        pytest.param("My kids love the aquarium.", "The user's kids love the aquarium.", id="kin-liking"),
        pytest.param("We have two rabbits now.", "The user and others have two rabbits now.", id="we-have"),
        pytest.param(
            "We adopted a greyhound last spring.",
            "The user and others adopted a greyhound in the spring of 2025.",
            id="we-adopted-season",
        ),
        pytest.param(
            "My brother and I went sailing off Brittany in July.",
            "The user's brother and the user went sailing off Brittany in July 2025.",
            id="co-subject",
        ),
    ],
)
def test_other_subjects_tied_to_the_speaker(text: str, expected: str) -> None:
    assert expected in contents(text)


@pytest.mark.parametrize(
    "text",
    [
        "My coworker keeps microwaving fish.",  # someone else's doings
        "We have a lot in common.",  # "we" is the two people talking
        "We can do it!",
        "My teammates and I were thrilled.",  # a passing state, with a co-subject
        "Our kids are our future.",
    ],
)
def test_other_subjects_that_are_not_the_speakers_life(text: str) -> None:
    assert contents(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Let's start with my 2017 Subaru Outback.", "The user has a 2017 Subaru Outback."),
        ("Can my Garmin Forerunner 255 track open-water swims?", "The user has a Garmin Forerunner 255."),
    ],
)
def test_a_specific_possession_named_in_passing(text: str, expected: str) -> None:
    assert contents(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "How many points do I need on my Starbucks Rewards app?",  # the names qualify "app"
        "This was my Grand Canyon trip last year.",
        "My Mom loves it.",
        "I told my Monday group about it.",
    ],
)
def test_proper_names_that_are_not_a_possession(text: str) -> None:
    assert not any(" has a " in c or " has an " in c for c in contents(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Gardening and baking bread are my main hobbies.",
            "Gardening and baking bread are the user's main hobbies.",
        ),
        ("Rock climbing makes me so happy.", "Rock climbing makes the user so happy."),
        ("Reminds me how much I love sailing.", "The user loves sailing."),
        (
            "Learning to code in Rust is something I'm always working on.",
            "The user is always working on learning to code in Rust.",
        ),
    ],
)
def test_likings_and_activities_whose_subject_is_not_the_speaker(text: str, expected: str) -> None:
    assert expected in contents(text)


def test_a_liking_of_something_said_before_is_not_read() -> None:
    assert contents("It makes me so happy.") == []
    assert contents("That is something I'm always working on.") == []


def test_one_of_several_favourites_is_a_liking_not_the_favourite_slot() -> None:
    [found] = extract("One of my favorite bands is Khruangbin.")
    assert found.attribute == "likes"
    assert found.content == "One of the user's favorite bands is Khruangbin."


def test_seasons_date_an_event() -> None:
    [mention] = find_dates("We moved here last summer", AT, seasons=True)
    assert (mention.start.date().isoformat(), mention.granularity) == ("2025-06-01", "season")
    [ahead] = find_dates("next winter", AT, seasons=True)
    assert ahead.start.date().isoformat() == "2026-12-01"
    assert find_dates("We moved here last summer", AT) == []  # search reads no seasons


def test_each_date_takes_the_tense_of_its_own_part() -> None:
    [found] = extract("I sat the bar exam in February and the results come out in May.")
    assert found.content == "The user sat the bar exam in February 2026 and the results come out in May 2026."


def test_a_past_tense_dates_a_bare_weekday_in_the_past() -> None:
    [found] = extract("I won the club chess tournament on Saturday!")
    assert found.event_time is not None and found.event_time.date().isoformat() == "2026-02-28"


def test_a_demonstrative_that_introduces_what_the_clause_describes() -> None:
    assert "The user read this great book about the history of salt." in contents(
        "I read this great book about the history of salt."
    )
    assert contents("I read this in one sitting.") == []


def test_a_future_state_with_a_number_or_a_place_is_a_plan() -> None:
    assert contents("I'll have four bikes with me.") == ["The user will have four bikes with them."]
    assert contents("I'll be in Lisbon for the conference.") == ["The user will be in Lisbon for the conference."]
    assert contents("I'll have to think about it.") == []
    assert contents("I'll be there in 5 minutes.") == []


def test_a_pronoun_whose_antecedent_is_in_the_same_clause() -> None:
    assert contents("I started coaching kids, helping them with their serve.") == [
        "The user started coaching kids, helping them with their serve."
    ]
    assert contents("I met Sarah and her new puppy at the park.") == [
        "The user met Sarah and her new puppy at the park."
    ]
    assert contents("I haven't seen pictures of them in a while.") == []
    assert contents("I volunteered at the homeless shelter and they gave me a medal.") == []


def test_a_trailing_clause_about_the_other_person_is_cut() -> None:
    assert contents("I took a road trip to Oaxaca for research while you were competing.") == [
        "The user took a road trip to Oaxaca for research."
    ]


def test_eagerness_for_something_the_speaker_will_do_is_a_plan() -> None:
    assert contents("I'm so excited to run the Berlin marathon.") == [
        "The user is so excited to run the Berlin marathon."
    ]
    assert contents("I'm excited to see what you come up with.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I help run a workshop on sustainable living at my library, and I want to share some tips.",
            ["The user helps run a workshop on sustainable living at their library."],
        ),
        (
            "I joined a Rust meetup group in Leeds, and it got me thinking about switching jobs.",
            ["The user joined a Rust meetup group in Leeds."],
        ),
        ("Even though I kept falling off, it taught me patience.", []),
        (
            "I've been giving away clothes I no longer wear.",
            ["The user has been giving away clothes the user no longer wears."],
        ),
    ],
)
def test_clause_boundaries_and_comments(text: str, expected: list[str]) -> None:
    assert contents(text) == expected


def test_me_inside_a_compound_is_no_pronoun() -> None:
    assert contents("I'm carving out some me-time each evening.") == [
        "The user is carving out some me-time each evening."
    ]
