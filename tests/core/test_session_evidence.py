"""Session evidence: a candidate shares in its session's best score (pure)."""

from __future__ import annotations

import pytest

from memstrata.core.retrieval import CandidateFacts, HybridParams, hybrid_rank
from memstrata.core.session_evidence import share_session_scores
from memstrata.errors import InvalidInput


def test_each_candidate_gains_a_share_of_its_sessions_best_score() -> None:
    scores = {"a1": 1.0, "b1": 0.6, "a2": 0.3, "b2": 0.2}
    sessions = {"a1": "a", "a2": "a", "b1": "b", "b2": "b"}
    shared = share_session_scores(scores, sessions, 0.5)
    assert shared == pytest.approx({"a1": 1.5, "b1": 0.9, "a2": 0.8, "b2": 0.5})
    assert list(shared) == list(scores)


def test_a_weak_turn_of_a_strong_session_passes_a_turn_of_a_weak_one() -> None:
    scores = {"strong": 1.0, "weak-session": 0.5, "same-session": 0.45}
    sessions = {"strong": "s1", "same-session": "s1", "weak-session": "s2"}
    shared = share_session_scores(scores, sessions, 0.2)
    assert shared["same-session"] > shared["weak-session"]
    assert shared["strong"] > shared["same-session"]  # the order inside a session is kept


def test_a_candidate_without_a_session_is_a_session_of_its_own() -> None:
    shared = share_session_scores({"fact": 0.5, "turn": 0.5}, {"turn": "s1"}, 0.2)
    assert shared == pytest.approx({"fact": 0.6, "turn": 0.6})


def test_weight_zero_or_no_candidates_changes_nothing() -> None:
    scores = {"a": 0.4, "b": 0.2}
    assert share_session_scores(scores, {"a": "s", "b": "s"}, 0.0) == scores
    assert share_session_scores({}, {}, 0.3) == {}


def test_hybrid_rank_applies_the_session_weight() -> None:
    keyword = [("top", 10.0), ("lone", 6.0), ("mate", 5.5), ("floor", 0.0)]
    facts = CandidateFacts(session_of={"top": "s1", "mate": "s1", "lone": "s2", "floor": "s3"})
    off = hybrid_rank(keyword, [], query="q", params=HybridParams(speaker_boost=0.0), facts=facts)
    on = hybrid_rank(keyword, [], query="q", params=HybridParams(speaker_boost=0.0, session_weight=0.2), facts=facts)
    assert [h.id for h in off] == ["top", "lone", "mate", "floor"]
    assert [h.id for h in on] == ["top", "mate", "lone", "floor"]
    with pytest.raises(InvalidInput, match="session_weight"):
        HybridParams(session_weight=-0.1)
