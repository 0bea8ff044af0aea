"""Context selection rules (`core.context_rank`) and the owner-name / superseded rules of `core.retrieval`."""

from __future__ import annotations

from memstrata.core.context_rank import (
    MIN_KEPT,
    Candidate,
    Standing,
    above_floor,
    asks_for_advice,
    floor_share,
    is_filler,
    select,
    standing_facts,
)
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
    assert select(hits, 0.3, advice=True) == [2, 1, 3]  # the floor never leaves fewer than MIN_KEPT
    assert select(hits, 0.3, advice=False) == [1, 3]


def test_the_floor_keeps_the_best_hits_then_cuts_at_a_share_of_the_best() -> None:
    scores = [1.0, 0.9, 0.5, 0.4, 0.35, 0.31, 0.29, 0.2, 0.1]
    assert above_floor(scores, 0.3, keep=2) == 6  # 0.31 passes the bar 0.3, 0.29 does not
    assert above_floor(scores, 0.3, keep=8) == 8  # never fewer than `keep`
    assert above_floor(scores, 0.0) == len(scores) and above_floor([], 0.3) == 0
    assert above_floor(scores[:3], 0.9, keep=MIN_KEPT) == 3


def test_only_an_advice_question_is_floored_so_factual_evidence_far_below_the_best_stays() -> None:
    assert floor_share(advice=True) > 10 * floor_share(advice=False) > 0.0
    hits = [Candidate(1.0, True, 0.6, True, f"Caroline went to the support group on day {n}.") for n in range(3)]
    hits += [Candidate(0.05 * n, True, 0.35, True, f"Melanie painted a lake on day {n}.") for n in range(1, 6)]
    assert len(select(hits, 0.3, advice=False)) == len(hits)
    assert len(select(hits, 0.3, advice=True)) < len(hits)
    assert len(select([*hits, Candidate(1e-7, True, None, True, "I'm vegetarian.")], 0.3, advice=False)) == len(hits)


def test_standing_facts_are_the_users_preferences_and_facts_by_importance_then_newest() -> None:
    memories = [
        Standing(True, True, 0.7, 1.0, "Maya is vegetarian."),
        Standing(False, True, 0.8, 2.0, "Maya has a peanut allergy."),
        Standing(False, False, 0.9, 3.0, "Postgres 16 was released in September."),
        Standing(True, False, 0.7, 4.0, "Maya's favorite restaurant is Casa Nova."),
        Standing(True, True, 0.9, 5.0, "ok"),
    ]
    assert standing_facts(memories) == [1, 3, 0]
    assert standing_facts(memories, slots=1) == [1] and standing_facts(memories, slots=0) == []


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
