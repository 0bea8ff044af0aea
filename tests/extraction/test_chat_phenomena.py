"""The offline extractor on ordinary chat: one test per phenomenon, each with sentences of its own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.models import MemoryKind

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)  # a Wednesday


def extract(text: str, *, speaker: str | None = None) -> list[Candidate]:
    return RuleExtractor().extract([Message(role="user", content=text, at=AT, speaker=speaker)])


def slots(text: str) -> list[tuple[str, str | None, str | None, int]]:
    return [(c.category, c.attribute, c.value, c.polarity) for c in extract(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [("I'm 34", "34"), ("lol I'm 41 going on 14", "41"), ("I just turned 30, feeling ancient", "30")],
)
def test_a_bare_age(text, value):
    assert slots(text) == [("identity", "age", value, 1)]


@pytest.mark.parametrize("text", ["I'm 5 minutes away", "I'm 2 stops from home"])
def test_a_number_that_is_no_age(text):
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [("My pronouns are they/them", "they/them"), ("fyi I use she/her pronouns", "she/her")],
)
def test_pronouns(text, value):
    assert slots(text) == [("identity", "pronouns", value, 1)]


def test_a_milestone_without_a_subject_is_dated_against_the_message():
    [event] = extract("Passed CFA Level II yesterday")
    assert (event.category, event.kind) == ("event", MemoryKind.EVENT)
    assert event.event_time == datetime(2026, 3, 3, tzinfo=UTC)
    assert event.content == "The user passed CFA Level II on 3 March 2026."


def test_an_undated_milestone_has_no_event_time():
    [event] = extract("I just got promoted!!")
    assert event.category == "event" and event.content == "The user just got promoted."


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I'm working on a project called Nebula, it's a data pipeline thing.", "Nebula"),
        ("Been heads down on a side project called Tidewater, a tiny CRM", "Tidewater"),
        ("I'm writing a fantasy novel called The Salt Road", "The Salt Road"),
    ],
)
def test_a_named_project_is_a_fact_and_an_entity(text, name):
    [project] = extract(text)
    assert (project.category, project.attribute, project.value) == ("identity", "project", name)
    assert project.entity_names == (name,)


@pytest.mark.parametrize(
    "text",
    [
        "Every Friday I have a team retro at 4pm.",
        "I go to the gym on Tuesdays and Thursdays",
        "My book club meets every other Wednesday",
        "I play five-a-side football on Wednesday nights",
    ],
)
def test_a_routine_keeps_its_recurrence_and_gets_no_single_date(text):
    [routine] = extract(text)
    assert (routine.category, routine.attribute, routine.event_time) == ("event", "routine", None)


def test_every_time_is_no_routine():
    assert extract("Every time I try to cook, something burns.") == []


@pytest.mark.parametrize(
    ("text", "channel"),
    [
        ("Best way to reach me is WhatsApp", "WhatsApp"),
        ("The easiest way to contact me is by email, I rarely check Slack.", "email"),
        ("Text me rather than calling", "text"),
        ("Reach me on Telegram if anything urgent comes up", "Telegram"),
    ],
)
def test_a_contact_channel_is_no_contact_time(text, channel):
    [found] = [c for c in extract(text) if c.attribute and c.attribute.startswith("preference:contact")]
    assert (found.attribute, found.value) == ("preference:contact_method", channel)


def test_a_best_time_stays_a_time():
    assert slots("Best time to reach me is after 6pm on weekdays") == [
        ("preference", "preference:contact_time", "after 6pm on weekdays", 1)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I just LOVE red-eye flights",
        "Oh I just adore sitting in traffic for two hours",
        "Sure, I LOVE doing my taxes at midnight 🙄",
        "oh great, another Monday morning meeting, my favourite",
        "I love flying economy on a 12 hour flight /s",
    ],
)
def test_sarcasm_is_no_liking(text):
    assert extract(text) == []


def test_a_sincere_liking_of_the_same_thing_is_kept():
    assert slots("I love red-eye flights, they let me sleep through the trip") == [
        ("preference", "likes", "red-eye flights", 1)
    ]


@pytest.mark.parametrize(
    "text", ["Please remember that.", "Remember this for later please!", "Can you remember that please?"]
)
def test_remember_that_alone_points_at_earlier_words(text):
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("always answer in French", "preference:response_language"),
        ("Please stop using emojis in every reply.", "preference:emojis"),
        ("From now on, use metric units.", "preference:units"),
        ("Keep your replies short please", "preference:answer_length"),
        ("When you suggest recipes, skip anything with mushrooms", None),
        ("Can you always include the calorie count when you give me recipes?", None),
    ],
)
def test_a_standing_instruction_is_a_procedure(text, attribute):
    [order] = extract(text)
    assert (order.kind, order.category, order.attribute) == (MemoryKind.PROCEDURE, "instruction", attribute)
    assert order.metadata()["procedure_type"] == "instruction"


@pytest.mark.parametrize("text", ["Use metric units.", "Never say never!", "Write me a poem about autumn"])
def test_a_one_off_imperative_or_a_saying_is_no_instruction(text):
    assert extract(text) == []


def test_a_stated_preference_stays_a_preference():
    [found] = extract("I prefer short answers.")
    assert (found.kind, found.category) == (MemoryKind.PREFERENCE, "preference")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I no longer work at Acme, I joined Globex",
            [("identity", "employer", "Acme", -1), ("identity", "employer", "Globex", 1)],
        ),
        (
            "I used to live in Madrid but now I'm in Porto",
            [("identity", "location", "Madrid", -1), ("identity", "location", "Porto", 1)],
        ),
        ("I hate coffee now", [("preference", "likes", "coffee", -1)]),
        ("I don't like coffee anymore tbh", [("preference", "likes", "coffee", -1)]),
        ("I used to love sushi", [("preference", "likes", "sushi", -1)]),
        ("Not a vegetarian anymore btw", [("preference", "diet", "vegetarian", -1)]),
        ("I'm not a coffee person anymore", [("preference", "likes", "coffee", -1)]),
        ("I quit my job at Initech last month", [("identity", "employer", "Initech", -1)]),
        ("I quit my job", [("identity", "employer", None, -1)]),
        ("Moved to Denver in January", [("identity", "location", "Denver", 1)]),
    ],
)
def test_an_update_gives_the_new_value_and_retires_the_old_one(text, expected):
    assert slots(text) == expected


def test_a_fact_about_someone_else_names_them_as_subject_and_entity():
    [fact] = extract("Sarah moved to the London office.")
    assert (fact.category, fact.subject, fact.attribute, fact.value) == (
        "entity",
        "sarah",
        "location",
        "the London office",
    )
    assert fact.entity_names == ("Sarah", "London")
    assert fact.content == "Sarah moved to the London office."


def test_someone_else_leaving_a_job_retires_their_employer():
    [fact] = extract("Lena quit her job at Meta to start a bakery")
    assert (fact.subject, fact.attribute, fact.polarity) == ("lena", "employer", -1)


def test_an_event_names_the_people_it_mentions():
    [event] = extract("I had lunch with Sarah today.")
    assert event.category == "event" and event.event_time == datetime(2026, 3, 4, tzinfo=UTC)
    assert [(e.name, e.type) for e in event.entities] == [("Sarah", "person")]


def test_a_relative_named_in_an_event_is_an_entity_of_the_event():
    found = extract("My best friend Kofi is getting married in June.")
    assert [c.category for c in found] == ["relation", "event"]
    assert found[1].entity_names == ("Kofi",)


@pytest.mark.parametrize(
    "text",
    [
        "I'm going to try making it tonight!",
        "I made this apple pie for the kids yesterday too!",
        "It made me reflect on how far I've come since last year.",
        "I should get a set up like that.",
        "I think I'll try out Mint and Personal Capital to see which one I like better.",
        "I like the sound of the Watermelon Basil Margarita.",
        "Learning another language is tough, but the rewards are totally worth it.",
        "The little one is doing great - learning commands and house training.",
        "My character in the novel lives in Prague",
    ],
)
def test_what_leans_on_the_conversation_is_not_stored(text):
    assert extract(text) == []


def test_a_date_lead_in_stays_with_its_clause():
    [event] = extract("Yesterday, I went to a fair to show off my studio")
    assert event.event_time == datetime(2026, 3, 3, tzinfo=UTC)


def test_a_day_inside_a_noun_phrase_is_no_date():
    [event] = extract("I recently made a caramel tart for my family's Sunday dinner")
    assert event.event_time is None and "Sunday dinner" in event.content


@pytest.mark.parametrize(
    ("text", "value"),
    [("Quick heads up: I'm lactose intolerant", "lactose intolerant"), ("I have type 2 diabetes", "type 2 diabetes")],
)
def test_a_health_condition(text, value):
    assert slots(text) == [("identity", "health", value, 1)]


def test_a_speaker_name_words_the_memory():
    [liking] = extract("I'm really into bouldering these days", speaker="Maya")
    assert liking.content == "Maya is into bouldering."
