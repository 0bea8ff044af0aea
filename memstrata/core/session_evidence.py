"""Session evidence: a candidate shares in the best score of its conversation session (pure re-ranking).

A turn that shares few words with a question ("It feels great to have their trust") is often found next to
the turns that do ("Some of them see me as a mentor"): one conversation session is usually about a few
topics, so a session holding a strong match is likely to hold the answer too. `share_session_scores` adds
to each candidate a share of the best score among the candidates of its session. Unlike smoothing over
adjacent turns (which moves a turn's score onto its neighbours and lost once turns are indexed with their
context), every candidate keeps its own score and the order inside a session is unchanged; only sessions
with a strong match rise against candidates scattered over sessions that match weakly.

A candidate without a session counts as a session of its own, so it gains the same share of its own score
and memories with and without sessions stay comparable.
"""

from __future__ import annotations

from collections.abc import Mapping


def share_session_scores(
    scores: Mapping[str, float], session_of: Mapping[str, str | None], weight: float
) -> dict[str, float]:
    """Each score plus `weight` times the best score among the candidates of the same session (its own
    included). Scores must be non-negative; `weight=0` returns them unchanged. The mapping's order is kept."""
    if weight <= 0 or not scores:
        return dict(scores)
    best: dict[str, float] = {}
    for memory_id, score in scores.items():
        group = session_of.get(memory_id)
        if group is not None and score > best.get(group, float("-inf")):
            best[group] = score

    def gain(memory_id: str, score: float) -> float:
        group = session_of.get(memory_id)
        return weight * (best[group] if group is not None else score)

    return {i: s + gain(i, s) for i, s in scores.items()}
