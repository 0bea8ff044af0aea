"""The offline rule extractor: what it finds, what it refuses, how it words memories."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Candidate, Extractor, Message
from memstrata.extraction.rules import RuleExtractor, third_person
from memstrata.models import MemoryKind

AT = datetime(2024, 5, 8, 10, 0, tzinfo=UTC)  # a Wednesday


def extract(text: str, *, speaker: str | None = None, known_name: str | None = None, role="user"):
    message = Message(role=role, content=text, at=AT, speaker=speaker)
    return RuleExtractor().extract([message], known_name=known_name)


def slots(candidates: list[Candidate]) -> list[tuple[str, str | None, str | None]]:
    return [(c.category, c.attribute, c.value) for c in candidates]


def test_is_an_extractor():
    assert isinstance(RuleExtractor(), Extractor)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("I prefer short answers.", [("preference", "preference:answer_length", "short")], id="prefer"),
        pytest.param("I love hiking.", [("preference", "likes", "hiking")], id="love"),
        pytest.param("I can't stand cilantro.", [("preference", "likes", "cilantro")], id="cant-stand"),
        pytest.param("My favorite color is green.", [("preference", "preference:favorite_color", "green")], id="fav"),
        pytest.param("Never use emojis in your answers.", [("instruction", "preference:emojis", "no")], id="never"),
        pytest.param("I'm vegetarian.", [("preference", "diet", "vegetarian")], id="diet"),
    ],
)
def test_preferences(text, expected):
    assert slots(extract(text)) == expected


def test_dislike_has_negative_polarity_and_preference_kind():
    [candidate] = extract("I really don't like horror movies.")
    assert candidate.polarity == -1
    assert candidate.kind is MemoryKind.PREFERENCE
    assert candidate.value == "horror movies"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("My name is Priya.", [("identity", "name", "Priya")], id="name"),
        pytest.param("Call me Liz.", [("identity", "name", "Liz")], id="call-me"),
        pytest.param("I live in Berlin.", [("identity", "location", "Berlin")], id="live-in"),
        pytest.param("We moved to Lisbon last year.", [("identity", "location", "Lisbon")], id="moved-to"),
        pytest.param(
            "I work at Stripe as a backend engineer.",
            [("identity", "employer", "Stripe"), ("identity", "job_title", "backend engineer")],
            id="employer-and-job",
        ),
        pytest.param("I'm an accountant.", [("identity", "job_title", "accountant")], id="job"),
        pytest.param("My timezone is CET.", [("identity", "timezone", "CET")], id="timezone"),
        pytest.param("I'm Dutch.", [("identity", "nationality", "Dutch")], id="nationality-not-name"),
    ],
)
def test_identity(text, expected):
    assert slots(extract(text)) == expected


def test_identity_carries_profile_slot_and_entity():
    [candidate] = extract("I live in Austin, Texas.")
    assert candidate.profile is not None
    assert (candidate.profile.category, candidate.profile.key) == ("identity", "location")
    assert candidate.entities[0].type == "place"
    assert candidate.kind is MemoryKind.FACT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("My manager Sarah wants the report by Friday.", ("relation:manager", "Sarah"), id="apposition"),
        pytest.param("My wife is Ana.", ("relation:wife", "Ana"), id="copula"),
        pytest.param("My boss is called David Kim.", ("relation:manager", "David Kim"), id="boss-is-manager"),
        pytest.param("Sarah is my sister.", ("relation:sister", "Sarah"), id="inverse"),
        pytest.param("I have a daughter named Mia.", ("relation:daughter", "Mia"), id="have-named"),
        pytest.param("My daughter's birthday is May 5th.", ("birthday:daughter", "May 5"), id="birthday"),
    ],
)
def test_relations(text, expected):
    [candidate] = extract(text)
    assert candidate.category == "relation"
    assert (candidate.attribute, candidate.value) == expected


def test_relation_names_a_person_entity_and_their_own_fact():
    relation, fact = extract("My brother Tom lives in Denver.")
    assert [(e.name, e.type) for e in relation.entities] == [("Tom", "person")]
    assert (fact.category, fact.subject, fact.attribute, fact.value) == ("entity", "tom", "location", "Denver")
    assert [(e.name, e.type) for e in fact.entities] == [("Tom", "person"), ("Denver", "place")]


def test_event_gets_absolute_time_and_content():
    [candidate] = extract("I'm flying to Tokyo next Friday.")
    assert candidate.category == "event"
    assert candidate.kind is MemoryKind.EVENT
    assert candidate.event_time == datetime(2024, 5, 10, tzinfo=UTC)
    assert candidate.content == "The user is flying to Tokyo on 10 May 2024."


def test_past_event_resolves_backwards():
    [candidate] = extract("We went to the beach on Saturday.")
    assert candidate.event_time == datetime(2024, 5, 4, tzinfo=UTC)


def test_relation_and_event_in_one_sentence():
    found = extract("My best friend Kofi is getting married in June.")
    assert [c.category for c in found] == ["relation", "event"]


def test_identity_with_a_date_is_not_also_an_event():
    assert slots(extract("I started a new job at Shopify last month.")) == [("identity", "employer", "Shopify")]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        pytest.param("Remember that my locker code is 4471.", "request", id="remember-that"),
        pytest.param("Note that the wifi password is 'pinecone'.", "request", id="note-that-keeps-quote"),
        pytest.param("Just so you know, I'm left-handed.", "request", id="just-so-you-know"),
        pytest.param("Remind me to call the plumber tomorrow.", "open_item", id="remind-me"),
        pytest.param("Can you remind me to send the invoice on Friday?", "open_item", id="question-form-remind"),
        pytest.param("I need to renew my passport before August.", "open_item", id="need-to"),
        pytest.param("Follow up with Jenna about the contract next week.", "open_item", id="follow-up"),
        pytest.param("TODO: migrate the database.", "open_item", id="todo"),
    ],
)
def test_requests_and_open_items(text, category):
    [candidate] = extract(text)
    assert candidate.category == category


def test_request_keeps_quoted_text_and_is_a_note():
    [candidate] = extract("Note that the wifi password at the cabin is 'pinecone'.")
    assert candidate.kind is MemoryKind.NOTE
    assert "'pinecone'" in candidate.content


def test_remember_that_with_a_known_slot_yields_the_slot():
    [candidate] = extract("Remember that I live in Porto now.")
    assert (candidate.category, candidate.attribute, candidate.value) == ("identity", "location", "Porto")


def test_open_item_due_date_and_task_kind():
    [candidate] = extract("Remind me to call the plumber tomorrow.")
    assert candidate.kind is MemoryKind.TASK
    assert candidate.event_time == datetime(2024, 5, 9, tzinfo=UTC)
    assert candidate.content == "The user wants to be reminded to call the plumber on 9 May 2024."


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        pytest.param("Actually my sister's name is Ana, not Anna.", "relation:sister", "Ana", id="relation"),
        pytest.param("Actually I live in Munich now, not Berlin.", "location", "Munich", id="location"),
        pytest.param("Sorry, my mistake - I work at Siemens, not Bosch.", "employer", "Siemens", id="employer"),
        pytest.param("Dana is my manager now, not Paul.", "relation:manager", "Dana", id="inverse-relation"),
    ],
)
def test_corrections_give_the_same_attribute_the_new_value(text, attribute, value):
    [candidate] = extract(text)
    assert (candidate.attribute, candidate.value) == (attribute, value)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Hi there!", id="greeting"),
        pytest.param("Thanks, that's really helpful!", id="thanks"),
        pytest.param("What is the capital of France?", id="question"),
        pytest.param("I like to ask: what is the capital of France?", id="like-to-ask"),
        pytest.param("Can you remind me what a monad is?", id="remind-me-what"),
        pytest.param("I love that you asked", id="love-that"),
        pytest.param("I love how clean this solution is!", id="love-how"),
        pytest.param(
            'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: I live in a loop', id="tb"
        ),
        pytest.param("Error: connection refused (ECONNREFUSED 127.0.0.1:5432)", id="error"),
        pytest.param("My code says 'I live in a loop'", id="quoted"),
        pytest.param("```python\nname = 'I work at Google'\n```", id="code"),
        pytest.param("If I lived in Paris, I would eat croissants every day.", id="hypothetical"),
        pytest.param("Suppose my manager is Bob; how should I phrase it?", id="suppose"),
        pytest.param("My friend said she hates mornings.", id="reported-speech"),
        pytest.param("He said 'I work at Amazon' but I don't believe him.", id="reported-quote"),
        pytest.param("What's my name again?", id="question-with-my-name"),
        pytest.param("Is my manager allowed to read my messages?", id="question-with-relation"),
        pytest.param("The Eiffel Tower is 330 meters tall.", id="general-knowledge"),
        pytest.param("People in Norway love skiing.", id="others-preference"),
        pytest.param("I'm a bit tired today, sorry for the typos.", id="state-not-job-not-event"),
        pytest.param("I need to understand how recursion works.", id="need-to-understand"),
        pytest.param("I'd like to know how vaccines work.", id="like-to-know"),
        pytest.param("Remember when we talked about Rust?", id="remember-when"),
        pytest.param("I'm going to ask you a few questions about Kubernetes.", id="going-to-no-date"),
        pytest.param("I really should start a cork board of my own shouldn't I.", id="tag-question"),
    ],
)
def test_skips(text):
    assert extract(text) == []


@pytest.mark.parametrize("role", ["assistant", "system"])
def test_non_user_messages_are_skipped(role):
    assert extract("Sure! I'll remember that you live in Berlin. I love jazz.", role=role) == []


def test_content_uses_speaker_name():
    [candidate] = extract("I live in Berlin.", speaker="Alice")
    assert candidate.content == "Alice lives in Berlin."
    assert candidate.subject == "user"


def test_content_uses_known_name():
    [candidate] = extract("I love my morning run.", known_name="Ben")
    assert candidate.content == "Ben loves their morning run."


def test_name_learned_in_the_same_batch_is_used_afterwards():
    messages = [
        Message(role="user", content="My name is Tom.", at=AT),
        Message(role="assistant", content="Nice to meet you, Tom!", at=AT),
        Message(role="user", content="I live in Oslo.", at=AT),
    ]
    found = RuleExtractor().extract(messages)
    assert [c.content for c in found] == ["The user's name is Tom.", "Tom lives in Oslo."]


def test_several_facts_in_one_message():
    found = extract("I'm Jana, I work at Spotify and I love techno.")
    assert slots(found) == [
        ("identity", "name", "Jana"),
        ("identity", "employer", "Spotify"),
        ("preference", "likes", "techno"),
    ]
    assert [c.content for c in found][1:] == ["Jana works at Spotify.", "Jana loves techno."]


def test_source_text_is_the_clause():
    [candidate] = extract("Thanks! Also, I moved to Vienna last month.")
    assert candidate.source_text == "I moved to Vienna last month."


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        pytest.param("I love my dog", None, "The user loves their dog.", id="possessive-after-subject"),
        pytest.param("I'm moving to Denver", "Ana", "Ana is moving to Denver.", id="im"),
        pytest.param("I've been to Rome", None, "The user has been to Rome.", id="ive"),
        pytest.param("I don't eat pork", None, "The user does not eat pork.", id="dont"),
        pytest.param("I really enjoy jazz", None, "The user really enjoys jazz.", id="adverb"),
        pytest.param("I went home", None, "The user went home.", id="past-unchanged"),
        pytest.param("I watch films", None, "The user watches films.", id="es-verb"),
        pytest.param("my sister visits me", None, "The user's sister visits them.", id="object-after-possessive"),
        pytest.param("we're getting married", None, "The user and others are getting married.", id="we"),
    ],
)
def test_third_person(text, name, expected):
    assert third_person(text, name) == expected
