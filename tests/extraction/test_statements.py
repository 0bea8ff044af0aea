"""Reading slots out of third-person memories and retractions out of chat (pure)."""

from __future__ import annotations

import pytest

from memstrata.extraction.statements import first_person, retracted_phrases


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Alice works at Acme Corp", "I work at Acme Corp"),
        ("The user's manager is Bob.", "My manager is Bob."),
        ("User prefers short answers", "I prefer short answers"),
        ("alice studies law", "I study law"),
        ("Alice watches chess", "I watch chess"),
        ("Alice doesn't eat meat", "I don't eat meat"),
        ("The user is vegan", "I am vegan"),
        ("Alice has two cats", "I have two cats"),
    ],
)
def test_first_person(text: str, said: str) -> None:
    assert first_person(text, ["Alice"]) == said


def test_first_person_leaves_other_subjects_alone() -> None:
    assert first_person("Bob works at Acme", ["Alice"]) is None
    assert first_person("Alicea works at Acme", ["Alice"]) is None


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("I no longer work at Acme, I joined Globex", ("work at acme",)),
        ("I don't drink coffee anymore", ("drink coffee",)),
        ("I used to live in Lisbon", ("live in lisbon",)),
        ("I quit my job at Initech last week", ("initech",)),
        ("we moved from Madrid to Porto last spring", ("madrid",)),
        ("sold the civic last month, I bike everywhere now", ("civic",)),
        ("Bob retired so my new manager is Karen", ("bob",)),
        ("I'm not vegan any more", ("vegan",)),
        ("I switched from Python to Rust at work", ("python",)),
    ],
)
def test_retracted_phrases(text: str, phrases: tuple[str, ...]) -> None:
    assert retracted_phrases(text) == phrases


@pytest.mark.parametrize(
    "text", ["I love coffee", "I live in Porto now", "My manager is Karen", "We left", "I never said that"]
)
def test_statements_that_retract_nothing(text: str) -> None:
    assert retracted_phrases(text) == ()
