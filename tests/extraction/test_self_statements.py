"""The general path: first-person statements no specific rule reads, and what it must not store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.extraction.base import Message
from memstrata.extraction.disclosure import disclosure_start, refusal
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.rules.self_statements import STATEMENT
from memstrata.models import MemoryKind

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)  # a Wednesday


def extract(text: str, speaker: str | None = None):
    return RuleExtractor().extract([Message("user", text, AT, speaker=speaker)])


@pytest.mark.parametrize(
    ("text", "content"),
    [
        pytest.param(
            "I recently set a personal best of 27:12 in the 5k.",
            "The user recently set a personal best of 27:12 in the 5k.",
            id="number-past-action",
        ),
        pytest.param(
            "Actually, I need 120 stars to reach the gold level, not 300.",
            "The user needs 120 stars to reach the gold level, not 300.",
            id="need-a-number",
        ),
        pytest.param(
            "I have two kids and a dog named Rex.", "The user has two kids and a dog named Rex.", id="possession"
        ),
        pytest.param(
            "I've been using the Pomodoro Technique to stay focused on my coding exercises.",
            "The user has been using the Pomodoro Technique to stay focused on their coding exercises.",
            id="ongoing-habit",
        ),
        pytest.param("I barely check email", "The user barely checks email.", id="adverb-before-verb"),
        pytest.param("I haven't tried oat milk yet", "The user has not tried oat milk yet.", id="negated-perfect"),
        pytest.param(
            "I'm planning to apply for a green card soon.",
            "The user is planning to apply for a green card soon.",
            id="plan",
        ),
    ],
)
def test_first_person_statements_are_kept_in_the_third_person(text: str, content: str) -> None:
    [candidate] = extract(text)
    assert candidate.content == content
    assert candidate.subject == "user"
    assert candidate.attribute in (STATEMENT, "event")


def test_a_dated_statement_is_an_event_at_the_date_it_names() -> None:
    [candidate] = extract("Last weekend I ran my first half marathon in 1:52.")
    assert candidate.kind is MemoryKind.EVENT
    assert candidate.category == "event"
    assert candidate.event_time == datetime(2026, 2, 28, tzinfo=UTC)
    assert "28 February 2026" in candidate.content and "last weekend" not in candidate.content.casefold()


def test_a_state_is_a_fact_whose_value_is_the_clause_as_said() -> None:
    [candidate] = extract("I drink coffee every morning")
    assert (candidate.kind, candidate.category, candidate.attribute) == (MemoryKind.FACT, "identity", STATEMENT)
    assert candidate.value == "I drink coffee every morning"
    assert candidate.content == "The user drinks coffee every morning."


def test_a_speakers_name_is_the_subject() -> None:
    [candidate] = extract("I recently started learning the cello.", speaker="Tim")
    assert candidate.content == "Tim recently started learning the cello."


def test_a_trailing_comment_on_the_statement_is_cut() -> None:
    [candidate] = extract("I've been using a standing desk at home, and it's been a game changer")
    assert candidate.content == "The user has been using a standing desk at home."


def test_a_sentence_a_rule_read_keeps_only_what_the_rule_found() -> None:
    found = extract("Text me rather than calling, I barely check email")
    assert [c.attribute for c in found] == ["preference:contact_method"]


def test_a_request_to_remember_stays_a_request() -> None:
    [candidate] = extract("Remember that my locker code is 4471.")
    assert candidate.category == "request"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("I'd like some recipe ideas for a dinner party", "request", id="request-would-like"),
        pytest.param("I need some help with my budget spreadsheet", "request", id="request-need-help"),
        pytest.param("I'm looking for recommendations on hiking boots", "request", id="request-looking-for"),
        pytest.param("I want to know more about index funds", "request", id="request-want-to-know"),
        pytest.param("I think the second approach is cleaner", "attitude", id="attitude-think"),
        pytest.param("I'm glad the meeting went well", "attitude", id="attitude-reaction"),
        pytest.param("I'm a bit tired today", "attitude", id="attitude-passing-state"),
        pytest.param("I'm in a meeting, brb", "attitude", id="attitude-where-now"),
        pytest.param("I just looove getting spam calls at 7am", "attitude", id="attitude-stretched"),
        pytest.param("I really appreciate the detailed breakdown", "attitude", id="attitude-adverb-first"),
        pytest.param("I can cook a decent risotto", "modal", id="modal-can"),
        pytest.param("I should call the bank about the card", "modal", id="modal-should"),
        pytest.param("I'll definitely keep that in mind", "modal", id="modal-promise"),
        pytest.param("I'll try to check the store's website next week", "modal", id="modal-tentative-dated"),
        pytest.param("I followed your advice about the sourdough starter", "assistant", id="assistant"),
        pytest.param("I've tried four different ones so far", "context", id="context-ones"),
        pytest.param("I talked to him afterwards about the lease", "context", id="context-pronoun"),
        pytest.param("I usually cook these recipes on Sundays", "context", id="context-demonstrative"),
        pytest.param("I didn't like the aftertaste at all", "attitude", id="attitude-like"),
        pytest.param("I noticed the aftertaste was bitter", "attitude", id="attitude-notice"),
        pytest.param("I tasted the aftertaste twice", "context", id="context-definite"),
        pytest.param("I've been busy since we last talked", "context", id="conversation-or-thin"),
        pytest.param("I'm based out of Lisbon now", "slot", id="slot-vocabulary"),
        pytest.param("I'm staying positive and looking ahead", "thin", id="thin-platitude"),
        pytest.param("I'm staying positive and looking ahead.", "thin", id="thin-platitude-full-stop"),
        pytest.param("I faced all kinds of hurdles this year", "thin", id="thin-abstract-nouns"),
        pytest.param("I'm finding some comfort in the good memories", "thin", id="thin-feelings"),
        pytest.param("I'm crossing my fingers for the audition", "thin", id="thin-idiom"),
        pytest.param("My hard work is finally paying off", "thin", id="thin-my-subject-platitude"),
        pytest.param("My garden will surely last", "thin", id="thin-adverbs-are-not-content"),
        pytest.param("I'm doing OK, thanks for checking in", "attitude", id="attitude-how-i-am"),
        pytest.param("I 100% agree with that plan", "attitude", id="attitude-percent-adverb"),
        pytest.param("I gotta say the crust was perfect", "modal", id="modal-gotta"),
        pytest.param("I made something special to cheer up the neighbours", "context", id="context-indefinite"),
        pytest.param("I started when I was nine", "context", id="context-elliptic-verb"),
        pytest.param("I definitely will!", "context", id="context-elliptic-auxiliary"),
        pytest.param("I did, Priya!", "context", id="context-elliptic-vocative"),
        pytest.param("I haven't watched that yet", "context", id="context-that-yet"),
        pytest.param("I've been painting ever since", "context", id="context-ever-since"),
        pytest.param("I had an amazing time with that fellow climber", "context", id="context-that-noun"),
        pytest.param("I have roughly two weeks for the trip.", "context", id="context-the-trip"),
        pytest.param("I'm hoping to finally nail my handstand this time", "attitude", id="attitude-hope-no-target"),
        pytest.param("I've been able to meet lots of like-minded makers", "modal", id="modal-able-to"),
        pytest.param("I remind myself why I took up the cello", "attitude", id="attitude-remind"),
        pytest.param("I've been wondering whether to switch banks", "attitude", id="attitude-musing"),
        pytest.param("I've been tinkering with for ages", "context", id="context-stranded-preposition"),
    ],
)
def test_refusal_names_the_category(text: str, reason: str) -> None:
    start = disclosure_start(text)
    assert start is not None
    got = refusal(text[start:], dated="next week" in text)
    if reason == "context" and text.endswith("we last talked"):
        assert got in ("conversation", "thin")
    else:
        assert got == reason


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("My question is about the tax deadline", id="conversational-subject"),
        pytest.param("My coworker keeps microwaving fish", id="someone-else"),
        pytest.param("My imagination soars when I read", id="inner-life"),
        pytest.param("my people skills to win clients over", id="plural-noun-is-no-verb"),
        pytest.param("When I moved here I knew nobody", id="subordinate-clause"),
        pytest.param("The new bookshelf is from IKEA", id="not-first-person"),
        pytest.param("Go for the blue one", id="imperative"),
    ],
)
def test_clauses_without_the_speaker_as_subject(text: str) -> None:
    assert disclosure_start(text) is None


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Do I need a visa for Japan?", id="question"),
        pytest.param("If I had more time I would learn the piano", id="hypothetical"),
        pytest.param("She said she works at Google", id="reported-speech"),
        pytest.param("Thanks, that's really helpful!", id="thanks"),
        pytest.param("Oh great, another Monday meeting, I just LOVE those", id="sarcasm"),
        pytest.param("Please remember that.", id="bare-remember"),
        pytest.param("Maybe I'll take up running", id="hedged"),
    ],
)
def test_nothing_is_stored(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "content"),
    [
        pytest.param("I'm building something like Notion for recipes", "building something like Notion", id="named"),
        pytest.param("I quit smoking in the spring", "quit smoking", id="object-after-quit"),
        pytest.param("I slowly rebuilt the porch steps", "slowly rebuilt the porch steps", id="adverb-not-a-verb"),
        pytest.param("I built a treehouse for the twins", "built a treehouse", id="irregular-past"),
        pytest.param("Been volunteering at the food bank", "has been volunteering at the food bank", id="dropped-ive"),
    ],
)
def test_specific_statements_still_pass_the_filter(text: str, content: str) -> None:
    found = extract(text)
    assert len(found) == 1 and content in found[0].content


def test_a_hope_with_a_specific_target_is_kept() -> None:
    [candidate] = extract("I'm hoping to run the Lisbon half under 1:45 this year")
    assert "Lisbon half under 1:45" in candidate.content


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I need a hand clearing out the attic this weekend", id="event-request"),
        pytest.param("I'll probably try to repaint the fence this weekend", id="event-tentative"),
        pytest.param("We had such a great time last weekend!", id="event-pleasantry"),
        pytest.param("I really love the soft glow it gives off", id="liking-of-an-earlier-thing"),
        pytest.param("I took your tip and tried the rye loaf yesterday", id="event-reaction-to-the-assistant"),
    ],
)
def test_specific_rules_read_no_fact_from_a_hedge(text: str) -> None:
    assert extract(text) == []


def test_a_hedged_afterthought_leaves_the_statement_before_it() -> None:
    [candidate] = extract("btw I have a ceramics class on Tuesdays, so maybe I'll glaze the bowls then")
    assert candidate.content == "The user has a ceramics class on Tuesdays."


def test_a_quoted_title_keeps_its_first_person_words() -> None:
    [candidate] = extract('I\'ve been reading "My Brilliant Friend" on the train')
    assert candidate.content == 'The user has been reading "My Brilliant Friend" on the train.'


def test_a_dropped_it_is_not_taken_for_a_dropped_i() -> None:
    assert extract("Been a long road, honestly") == []
    assert extract("Been hectic for me lately") == []


def test_the_general_path_never_takes_a_slot_the_rules_read() -> None:
    [candidate] = extract("I live in Porto now")
    assert candidate.attribute == "location"
