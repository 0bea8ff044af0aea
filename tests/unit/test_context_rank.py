"""Context selection rules (`core.context_rank`) and the owner-name / superseded rules of `core.retrieval`."""

from __future__ import annotations

from memstrata.core.context_rank import Candidate, asks_for_advice, is_filler, select
from memstrata.core.retrieval import CandidateFacts, as_about_user, hybrid_rank, is_about_user


def test_filler_turns_are_told_from_turns_with_content() -> None:
    assert all(is_filler(t) for t in ["Thanks, that's all for now.", "ok", "Got it.", "Hello again", "Great, thanks!"])
    assert not any(is_filler(t) for t in ["I prefer spicy food.", "Thanks, the dentist is on Friday"])


def test_advice_questions_are_recognized() -> None:
    assert asks_for_advice("plan a dinner") and asks_for_advice("what should I cook tonight?")
    assert not asks_for_advice("where does Maya live?")


def test_selection_drops_filler_prefers_facts_for_advice_and_keeps_a_relative_floor() -> None:
    hits = [
        Candidate(1.8, True, 0.1, True, "Thanks, that's all for now."),
        Candidate(1.0, True, 0.4, True, "I prefer spicy food."),
        Candidate(0.9, False, 0.2, False, "The user has a peanut allergy."),
        Candidate(0.1, True, 0.1, True, "The migration failed last night."),
    ]
    assert select(hits, 0.3, advice=True) == [2, 1]
    assert select(hits, 0.3, advice=False) == [1]


def test_owner_names_read_as_the_user_but_not_a_namesake() -> None:
    assert as_about_user("where does Maya live?", ["Maya"]) == "where does the user live?"
    assert as_about_user("what is Maya's mother called?", ["Maya"]) == "what is the user's mother called?"
    assert as_about_user("where does Maya Chen live?", ["Maya"]) == "where does Maya Chen live?"
    assert as_about_user("where did Caroline go?", []) == "where did Caroline go?"
    assert is_about_user("Maya lives in Porto.", None, ["Maya"]) and is_about_user("The user lives in Porto.", None, [])
    assert not is_about_user("Maya's mother lives in Montreal.", None, ["Maya"])


def test_superseded_candidates_rank_below_current_ones_of_equal_relevance() -> None:
    kw = [("old", 1.0), ("new", 1.0)]
    ranked = hybrid_rank(kw, kw, query="where do I work", facts=CandidateFacts(superseded={"old": True}))
    assert [h.id for h in ranked] == ["new", "old"]
