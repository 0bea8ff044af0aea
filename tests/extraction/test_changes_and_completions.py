"""A restated value retires the old one (`changes`); a done report closes an open item (`completions`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import Memory, Scope, SearchFilter
from memstrata.embedders import HashingEmbedder
from memstrata.extraction.base import Message
from memstrata.extraction.changes import change_retires, restated_value, update_cue, value_types
from memstrata.extraction.completions import closed_items, past_forms
from memstrata.extraction.resolution import normalize_value
from memstrata.extraction.rules import RuleExtractor
from memstrata.storage.base import Store

FIRST = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def retires(new: str, old: str) -> bool:
    return change_retires(normalize_value(new), normalize_value(old))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The launch is on April 10.", "we moved the launch to May"),
        ("my number is 555-1234", "my new number is 555-9876"),
        ("the meeting is on Thursday", "the meeting is now on Friday"),
        ("the call is tomorrow at 2pm", "actually it's 3pm not 2pm"),
        ("my email is bob@old.com", "I changed my email to bob@new.com"),
        ("the deadline is this Friday", "we pushed the deadline to next week"),
        ("my address is 12 Oak Street", "my address is now 40 Elm Road"),
        ("the wedding is in Rome", "the wedding is now in Porto"),
        ("the dentist appointment is on Monday", "I rescheduled the dentist appointment to Wednesday"),
    ],
)
def test_a_restated_value_retires_the_old_one(old: str, new: str) -> None:
    assert retires(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("the launch is on April 10", "we moved the party to May"),  # another subject
        ("Sam's number is 555-1234", "my new number is 555-9876"),  # someone else's
        ("my number is 555-1234", "my new phone is an iPhone"),  # a phone is not its number
        ("the meeting is with Bob", "the meeting is now on Friday"),  # another attribute of the meeting
        ("the launch is in May", "we moved the launch to May"),  # already says it
        ("the call is at 2pm", "actually I prefer tea not coffee"),  # "not" with values of no type
        ("my plan is to rest", "my plan is now to travel"),  # a vague subject
        ("I love my new bike", "my new bike is red"),  # no old value of the bike's
    ],
)
def test_an_unrelated_statement_retires_nothing(old: str, new: str) -> None:
    assert not retires(new, old)


def test_value_types_name_one_type_per_span() -> None:
    assert value_types("call me at 555-9876") == {"phone"}
    assert value_types("at 3pm on friday") == {"time", "date"}
    assert value_types("in porto") == set()


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("call the dentist", "I called the dentist"),
        ("finish the report", "done with the report"),
        ("finish the report", "the report is finished, finally"),
        ("send the invoice to Sam", "I already sent it"),
        ("renew my passport by Friday", "I renewed my passport yesterday"),
        ("with Maria about the contract", "followed up with Maria this morning"),
        ("book flights to Rome", "ok so I booked the flights to Rome"),
        ("book a dentist appointment", "finally got the dentist appointment booked"),  # "got X booked"
        ("fix the leaky faucet", "the faucet is fixed now"),  # a passive after the object
        ("finish the quarterly report", "the report's done!"),  # a possessive 's
        ("cancel my gym membership", "I finally cancelled my gym membership"),  # a doubled consonant
    ],
)
def test_a_done_report_closes_the_open_item(item: str, said: str) -> None:
    assert closed_items(said, [item]) == [0]


@pytest.mark.parametrize(
    ("items", "said"),
    [
        (["call the dentist"], "I haven't called the dentist yet"),
        (["call the dentist"], "I'll call the dentist tomorrow"),
        (["call the dentist"], "did I call the dentist?"),
        (["call the dentist"], "I called my mom"),  # another object
        (["call the dentist"], "Sam called the dentist"),  # someone else did
        (["send the invoice to Sam", "send the slides"], "I sent it"),  # which one?
        (["finish the report"], "done with coffee"),
        (["call the dentist"], "the dentist called me back"),  # the object did it, not a passive
        (["book the flights"], "Sam got the flights booked"),  # someone else got it done
        (["fix the leaky faucet"], "the faucet isn't fixed yet"),
        (["book the flights"], "are the flights booked?"),
    ],
)
def test_other_messages_close_nothing(items: list[str], said: str) -> None:
    assert closed_items(said, items) == []


def test_past_forms() -> None:
    assert past_forms("call") == {"called"} and past_forms("send") == {"sent"}
    assert past_forms("renew") == {"renewed"} and past_forms("book") == {"booked"} and past_forms("pay") == {"paid"}
    assert past_forms("cancel") == {"canceled", "cancelled"} and "shipped" in past_forms("ship")


def learned(memory: Memory, *said: str) -> tuple[list[str], list[str]]:
    scope = Scope("alice")
    for day, text in enumerate(said):
        memory.learn([Message("user", text, FIRST + timedelta(days=day))], scope=scope)
    current = [r.content for r in memory.list(scope=scope, limit=100)]
    everything = memory.list(scope=scope, limit=100, filters=SearchFilter(include_superseded=True))
    return current, [r.content for r in everything if r.valid_to is not None]


def memory_on(store: Store) -> Memory:
    return Memory(store=store, embedder=HashingEmbedder(64), extractor=RuleExtractor(), track_access=False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The launch is on April 10.", "we moved the launch to May"),
        ("my number is 555-1234", "my new number is 555-9876"),
        ("my email is bob@old.com", "I changed my email to bob@new.com"),
    ],
)
def test_learn_retires_a_restated_value_with_history(store: Store, old: str, new: str) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, old, new)
    assert len(current) == 1 and len(history) == 1
    assert new.split()[-1].casefold() in current[0].casefold()


def test_learn_keeps_an_unrelated_fact(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "The launch is on April 10.", "we moved the party to May")
    assert len(current) == 2 and history == []


@pytest.mark.parametrize(
    ("task", "done"),
    [
        ("remind me to call the dentist", "I called the dentist"),
        ("I still need to finish the report", "done with the report"),
        ("don't let me forget to send the invoice to Sam", "I already sent it"),
        ("remind me to fix the leaky faucet", "the faucet is fixed now"),
    ],
)
def test_learn_closes_an_open_item_with_history(store: Store, task: str, done: str) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, task, done)
    assert [c for c in current if "has done the open item" in c or "sent" in c] == current
    assert len(history) == 1


def test_learn_leaves_an_open_item_not_done(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "remind me to call the dentist", "I haven't called the dentist yet")
    assert any("reminded to call the dentist" in c for c in current) and history == []


# --- restated values in the ways people say them (issue 30) ------------------------------------------


def retires_as_said(new: str, old: str) -> bool:
    """`change_retires` as resolution calls it: the normalized values, and the new sentence as said."""
    return change_retires(normalize_value(new), normalize_value(old), said=new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("my rent is $1,500 a month", "my rent went up to $1,650 a month"),
        ("the team offsite is in Denver", "the offsite got moved from Denver to Austin"),
        ("my email is bob@old.com", "my email changed to bob@new.com"),
        ("my sister lives in Chicago", "my sister moved to Seattle"),
        ("my parents live in Ohio", "my parents moved to Florida last year"),
        ("our anniversary dinner is at 7pm", "we moved dinner to 8pm"),
        ("my phone number is 555-1234", "btw I got a new phone number, it's 555-9876"),
        ("my kid's soccer practice is on Thursdays", "soccer practice is no longer on Thursdays, it's on Mondays"),
        ("my mom's birthday dinner is on Saturday", "mom's birthday dinner got moved to Sunday"),
        ("my due date is June 3", "my due date got moved up to May 28"),
        ("my start date is March 1", "my start date got pushed to March 15"),
        ("my step goal is 8,000", "I bumped my step goal up to 10,000"),
        ("I'm planning to visit Japan in October", "change of plans, we're going to Korea in October instead of Japan"),
        ("I've been wearing my Garmin watch for 6 months now", "I've been wearing my Garmin watch for 9 months now"),
        ("I'm meeting Sam on Friday", "I'm meeting Sam on Saturday instead"),
        ("I need 200 points to reach the silver tier", "Actually, I need 180 points to reach the silver tier, not 250"),
        (
            "I've finished 8 lectures in the past two weeks",
            "lately I've watched 12 Khan Academy lectures in the past two weeks",
        ),
        ("my commute is 40 minutes", "my commute is only 25 minutes now that we moved"),
        ("I have 2 cats", "we have 3 cats now"),
        ("my son's school starts at 8:15", "school starts at 8:30 now"),
        ("The launch is on April 10.", "heads up, launch moved to May"),  # an opener before the subject
        ("The launch is on April 10.", "launch is May now"),  # the trailing "now" as said
        ("my phone number is 555-1234", "new number: 555-9876"),
        ("my phone number is 555-1234", "my number changed, it's 555-9876 now"),
        ("my gym is Planet Fitness", "I switched gyms, I go to Equinox now"),  # the kind switched, then its value
        ("my best friend is Maya", "honestly my best friend these days is Priya"),
    ],
)
def test_a_value_restated_as_people_say_it_retires_the_old_one(old: str, new: str) -> None:
    assert retires_as_said(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("my boss is Linda", "my sister's boss is now Marcus"),  # someone else's boss
        ("my mom's birthday dinner is on Saturday", "Sam's birthday dinner got moved to Sunday"),  # another owner
        ("my sister's birthday is on May 3", "the party is now on May 10"),  # another subject
        ("I'm meeting Sam on Friday", "I'm meeting Alex on Saturday instead"),  # another frame
        ("my dog is a poodle", "I got a new dog, it's a beagle"),  # a new dog is not the old dog's value
        ("I've been wearing my Garmin for 6 months", "I've been using Duolingo for 9 months now"),
        ("I have 2 cats", "I have 3 kids now"),  # another thing counted
        ("I have 3 dogs", "my neighbour has 4 dogs now"),  # someone else's
        ("I've read 12 books this year", "I've watched 15 movies this year so far"),
        ("our office is in Midtown", "our favorite bar moved to Brooklyn"),
        ("my sister is a nurse", "my sister moved to Seattle"),  # a place replaces a place only
        ("I ran 5 miles yesterday", "I ran 3 miles today"),  # no update cue: two runs
        ("I went to a concert on May 1st", "on May 15th, so I've been here for 3 years now"),  # "on may" names nothing
        ("my dance classes get me pumped for work", "losing my job pushed me to take the plunge"),  # "me" is no subject
        ("I love coffee", "I'm having tea instead of coffee today"),  # nothing else shared with the old one
        ("my gym buddy is Tom", "I switched gyms, I go to Equinox now"),  # the buddy is not the gym
        ("my gym is Planet Fitness", "I switched gyms"),  # no new gym named: the old one may still hold
        ("my gym is Planet Fitness", "I switched shampoos, I use Aveda now"),
        ("my phone number is 555-1234", "new phone case: 12 dollars"),  # not the number
        # "so far" says a count grew, not that a day changed: two sales at the market on two days
        ("I sold jam at the market on May 29th", "good season so far, I sold herbs at the market on May 15th"),
    ],
)
def test_two_facts_that_share_words_both_stay(old: str, new: str) -> None:
    assert not retires_as_said(new, old)


def test_update_cue_finds_the_sentences_learn_tests() -> None:
    assert update_cue("school starts at 8:30 now") and update_cue("the conference moved to Vienna")
    assert update_cue("I'm seeing Dr. Okafor instead of Dr. Patel") and update_cue("new number: 555-9876")
    assert not update_cue("I'm so happy now")  # a cue, but no value to restate
    assert not update_cue("We went hiking in the Alps")


def test_restated_value_needs_an_update_cue_or_a_standing_value_and_the_same_frame() -> None:
    old = normalize_value("I've been learning Spanish for 3 months")
    new = normalize_value("I've been learning Spanish for 6 months now")  # normalizing drops the trailing "now"
    assert restated_value(new, old, said="I've been learning Spanish for 6 months now")
    assert restated_value("i ve already been learning spanish for 6 months", old)
    # without a cue: how long a state has gone on holds until it is said again
    assert restated_value(new, old, said="I've been learning Spanish for 6 months")
    assert not restated_value("i ve been learning spanish for 3 months now", old)  # the same value
    # a past episode is not a standing value: two illnesses, two runs
    assert not restated_value(normalize_value("I was sick for 5 days"), normalize_value("I was sick for 3 days"))
    assert not restated_value(normalize_value("I ran 5 miles"), normalize_value("I ran 3 miles"))


@pytest.mark.parametrize(
    ("old", "new", "now"),
    [
        ("my son's school starts at 8:15", "school starts at 8:30 now", "8:30"),  # not extracted on its own
        ("the conference is in Berlin this year", "the conference moved to Vienna", "Vienna"),
        ("I've been learning Spanish for 3 months", "I've been learning Spanish for 6 months now", "6 months"),
        ("my daily step goal is 8,000", "I bumped my step goal up to 10,000", "10,000"),
        ("my phone number is 555-1234", "my number changed, it's 555-9876 now", "555-9876"),  # the whole sentence
        ("my gym is Planet Fitness", "I switched gyms, I go to Equinox now", "Equinox"),
    ],
)
def test_learn_retires_a_value_restated_in_chat(store: Store, old: str, new: str, now: str) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, old, new)
    assert len(history) == 1 and not any(h in current for h in history)
    assert any(now in c for c in current)


def test_learn_stores_an_update_sentence_only_when_it_replaces_something(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "I love hiking", "school starts at 8:30 now")
    assert current == ["The user loves hiking."] and history == []


def test_learn_keeps_two_durations_of_different_things(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "I've been running for 3 years", "I've been playing guitar for 5 years now")
    assert len(current) == 2 and history == []


# --- a restated value without an update cue (issue 30, "updates that retire") ------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a rate: holds until it is said again
        ("I spend about an hour a day on Duolingo", "I spend about two hours a day on Duolingo"),
        ("I practice piano 3 times a week", "I practice piano 5 times a week"),
        ("I drink 2 cups of coffee each morning", "I drink 3 cups of coffee each morning"),
        # how long a state has gone on
        ("I've been volunteering at the shelter for 2 years", "I've been volunteering at the shelter for 3 years"),
        # a count in the present tense
        ("I lead a team of 4 engineers", "I lead a team of six engineers"),
        ("I have 2 bikes in the garage", "I have 3 bikes in the garage"),
        # an attribute of the user's, named by two words, with another number
        ("I ran a personal best 10k time of 51:30 in April", "I want to beat my personal best 10k time of 49:58"),
        ("my monthly phone bill is $45", "my monthly phone bill is $60"),
        (
            "I've been sticking to my morning stretching routine - it's been 2 weeks",
            "I've been keeping up my morning stretching routine for 5 weeks",
        ),
        # how many days a week, said as a count or as the days
        ("I swim on Mondays and Wednesdays", "I keep up my swim schedule three times a week"),
        ("I go running 2 times a week", "I go running on Tuesdays, Thursdays and Sundays"),
        # a day or a time that recurs
        ("I have a pottery class on Wednesday", "I have a pottery class on Saturdays"),
        ("I usually wake up at 6am", "I usually wake up at 5:30am"),
        ("I do yoga twice a week", "I do yoga three times a week"),
        # an amount the user changed, changed again
        ("I've cut back to just one cup of coffee in the morning", "so I have increased the limit to two cups"),
        ("I reduced my screen time to 3 hours a day", "I've lowered my screen time to 2 hours a day"),
    ],
)
def test_a_standing_value_said_again_retires_the_old_one_without_a_cue(old: str, new: str) -> None:
    assert retires_as_said(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I ran 5 miles on the trail", "I ran 3 miles on the trail"),  # a past action: two runs
        ("I was sick for 3 days", "I was sick for 5 days"),  # two illnesses
        ("my budget is around $600", "my budget is around $100"),  # one word: the budget of what?
        ("I read 20 pages each night", "I write 500 words each night"),  # another frame, another unit
        ("I lead a team of 4 engineers", "my sister leads a team of 6 engineers"),  # someone else's team
        ("I spend an hour a day on Duolingo", "I spend two hours a week on chess"),
        ("my personal best 5k time is 27:12", "my friend's personal best 5k time is 25:50"),  # someone else's
        ("my monthly phone bill is $45", "my monthly phone bill came with 5 free minutes"),  # nothing counted alike
        ("I go to the gym on Mondays and Thursdays", "my piano lessons are three times a week"),  # another activity
        ("I swim on Mondays and Wednesdays", "I swim on Friday"),  # one day is no weekly schedule
        ("I've been learning Spanish for 3 months", "I've been learning guitar for 5 months"),
        ("I increased my cycling to 50 miles a week", "I reduced my running to 10 miles a week"),  # another thing
        ("I cut back to one cup of coffee", "I'm thinking of increasing it to two cups"),  # not done yet
        ("I cut back to one cup of coffee", "my husband cut back to two cups"),  # someone else's
        ("I have a meeting at 3pm", "I have a meeting at 4pm"),  # two meetings: no habit said
        ("I take piano lessons on Tuesdays", "my sister takes piano lessons on Thursdays"),  # someone else's habit
        ("I sold jam at the market on Saturdays", "I sold herbs at the market on Sundays"),  # past, and other goods
        ("I go to the gym on Mondays and Thursdays", "I go to the gym twice a week"),  # the same count
    ],
)
def test_a_different_value_of_another_attribute_keeps_both(old: str, new: str) -> None:
    assert not retires_as_said(new, old)


def test_learn_retires_an_undated_event_restated_with_another_number(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(
            memory,
            "I got approved for a $20,000 car loan from my credit union",
            "I got approved for a $25,000 car loan from my credit union",
        )
    assert history == ["The user got approved for a $20,000 car loan from their credit union."]
    assert current == ["The user got approved for a $25,000 car loan from their credit union."]


def test_learn_keeps_two_dated_events_with_other_numbers(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, "I ran 5 miles yesterday", "I ran 3 miles yesterday")
    assert len(current) == 2 and history == []


def test_instead_of_a_pronoun_retires_nothing() -> None:
    # "instead of it": what it replaces was said elsewhere, so no stored sentence is known to name it
    assert not retires_as_said(
        "what else can I use instead of it, it's also slow now",
        "we started advertising on Instagram and it's now been about a week",
    )


FILLER = [
    f"I've been consistent with my {thing} routine since {month}"
    for thing in ("skincare", "reading", "journaling", "stretching", "meditation", "budgeting", "cooking", "sleep")
    for month in ("January", "March")
] + [f"I bought {n} new {thing} last week" for n, thing in enumerate(("plants", "mugs", "books", "candles"), 2)]


def test_learn_finds_the_old_value_among_many_memories(store: Store) -> None:
    """The older value is found by what it is about ("gym"), not only among the candidate's nearest vectors."""
    with memory_on(store) as memory:
        current, history = learned(
            memory,
            "I go to the gym on Tuesdays, Thursdays and Saturdays",
            *FILLER,
            "I've been consistent with my gym routine - four times a week, actually.",
        )
    assert history == ["The user goes to the gym on Tuesdays, Thursdays and Saturdays."]
    assert any("four times a week" in c for c in current)


@pytest.mark.parametrize(
    ("old", "new", "now"),
    [
        (
            "Can you suggest some podcasts? By the way, I've been learning French for about 4 months now.",
            "Any tips on French grammar? I've been learning French for 7 months and it's going well.",
            "7 months",
        ),
        ("I have 12 succulents on my windowsill.", "How do I propagate succulents? I have 18 succulents now!", "18"),
        (
            "I volunteer at the animal shelter on Saturdays.",
            "I volunteer at the animal shelter on Sundays now.",
            "Sundays",
        ),
        (
            "I work from home two days a week.",
            "Any tips for my home office? I work from home three days a week.",
            "three",
        ),
        (
            "I practice guitar for about 20 minutes every day.",
            "I practice guitar for about an hour every day now.",
            "hour",
        ),
        # read as a habit once and as a statement once
        (
            "What should I cook tonight? I usually spend about 30 minutes cooking dinner.",
            "Any quick recipes? I spend about 45 minutes cooking dinner each night these days.",
            "45 minutes",
        ),
        # a total so far, as a dated event
        ("I've read 8 books so far this year.", "Any thrillers? I've read 14 books this year, trying to hit 20.", "14"),
    ],
)
def test_learn_retires_a_value_said_again_in_chat_without_a_cue_word(
    store: Store, old: str, new: str, now: str
) -> None:
    with memory_on(store) as memory:
        current, history = learned(memory, old, new)
    assert len(history) == 1 and any(now in c for c in current)


def test_learn_keeps_two_totals_of_different_things_over_time_windows(store: Store) -> None:
    with memory_on(store) as memory:
        current, history = learned(
            memory,
            "I've finished three books in the past two months.",
            "I've saved around 20 single-use plastic bottles in the past six weeks.",
        )
    assert len(current) == 2 and history == []


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("By the way, I have 2 kids and they keep me busy.", "We also have 3 dogs at home, any food tips?"),
        ("I bought 3 succulents at the market last week.", "I bought 5 orchids at the nursery yesterday."),
        ("My sister has been living in Paris for 2 years.", "I've been living in Berlin for 5 years."),
        ("I walk about 10,000 steps a day.", "I drink about 8 glasses of water a day."),
        ("I attend a pottery class on Tuesdays.", "I attend a yoga class on Thursdays."),
        ("I've visited 12 countries so far.", "I've visited 3 national parks this year."),
        ("My morning routine takes 30 minutes.", "My evening routine takes 45 minutes."),
        ("I've been married for 5 years.", "I've been working at Google for 3 years."),
        ("I usually go to bed at 11pm.", "I usually wake up at 7am."),
        ("I spend 2 hours a day on my phone.", "I spend 1 hour a day reading."),
        ("I've been using my Kindle for 2 years.", "I've been using my iPad for 4 years."),
        ("I lead a team of 4 engineers.", "I mentor a group of 6 students."),
        ("I ran a 5K in 28 minutes last month.", "I ran a 10K in 58 minutes last weekend."),
        ("I have a dentist appointment on Monday.", "I have a haircut appointment on Friday."),
        ("I practice piano for 30 minutes every day.", "I practice Spanish for 20 minutes every day."),
    ],
)
def test_learn_keeps_two_values_of_different_attributes_said_in_chat(store: Store, first: str, then: str) -> None:
    with memory_on(store) as memory:
        _, history = learned(memory, first, then)
    assert history == []
