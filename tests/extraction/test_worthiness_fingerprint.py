"""The store-worthiness weights carry the feature rows of a fixed probe set: a change in what the
feature code computes fails here until the weights are retrained, a change in how it is written does not."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memstrata.embedders.registry import default_embedder
from memstrata.extraction import worthiness
from memstrata.extraction.worthiness import (
    CHEAP_FEATURES,
    MODEL_PATH,
    PROBES,
    RETRAIN_COMMAND,
    StoreWorthiness,
    Weights,
    fingerprint,
    probe_rows,
    read,
    stale_features,
)


def check_shipped_weights() -> None:
    """Fail, naming the command that retrains, when the shipped weights do not fit the feature code."""
    weights = Weights.load(MODEL_PATH)
    why = stale_features(weights.probes, probe_rows(default_embedder().embed_documents))
    if why is not None:
        pytest.fail(
            f"{MODEL_PATH.name} was fitted on other feature code: {why}.\n"
            f"Retrain it (this rewrites the weights and their fingerprint), from the repository root:\n"
            f"    {RETRAIN_COMMAND}",
            pytrace=False,
        )


def test_the_shipped_weights_fit_the_feature_code() -> None:
    check_shipped_weights()


def test_a_changed_feature_function_fails_the_check_and_names_the_retrain_command(monkeypatch) -> None:
    # "love" no longer a liking verb: a change in behaviour of one feature
    liking = r"\b(?:likes?|enjoys?|enjoyed|passion|favou?rite|hobby|into)\b"
    monkeypatch.setattr(worthiness, "_LIKING", re.compile(liking, re.IGNORECASE))
    with pytest.raises(pytest.fail.Exception) as failed:
        check_shipped_weights()
    message = str(failed.value)
    assert RETRAIN_COMMAND in message
    assert (
        "'I love experimenting in the kitchen' (liking)" in message and "probe clauses have other features" in message
    )


def test_a_changed_helper_the_features_call_fails_the_check(monkeypatch) -> None:
    monkeypatch.setattr(worthiness, "specific_words", lambda clause: [])
    with pytest.raises(pytest.fail.Exception, match="log_specific_words"):
        check_shipped_weights()


def test_the_same_behaviour_written_otherwise_passes(monkeypatch) -> None:
    # the shipped time-word pattern, rewritten: other source text, the same feature values
    rewritten = re.compile(
        r"\b(?:yesterday|today|tomorrow|last|next|ago|since|recently|weeks?|weekend|months?|years?)\b", re.IGNORECASE
    )
    monkeypatch.setattr(worthiness, "_TIME_WORD", rewritten)
    check_shipped_weights()


def test_every_cheap_feature_is_set_by_some_probe() -> None:
    rows = probe_rows(default_embedder().embed_documents)
    cheap = rows[:, -len(CHEAP_FEATURES) :]
    unset = [name for name, column in zip(CHEAP_FEATURES, cheap.T, strict=True) if not column.any()]
    assert unset == []
    assert len(rows) == len(PROBES)


def test_stale_features_names_the_probe_and_the_feature() -> None:
    rows = probe_rows(default_embedder().embed_documents)
    assert stale_features(rows, rows + worthiness.FEATURE_TOLERANCE / 2) is None  # float noise
    moved = rows.copy()
    column = rows.shape[1] - len(CHEAP_FEATURES) + CHEAP_FEATURES.index("question")
    moved[3, column] = 1.0 - moved[3, column]
    why = stale_features(rows, moved)
    assert why is not None and "1 of" in why and PROBES[3] in why and "question" in why
    assert fingerprint(rows) in why and fingerprint(moved) in why
    assert "shape" in (stale_features(rows, rows[:-1]) or "")
    assert "no probe rows" in (stale_features(None, rows) or "")


def test_the_probe_rows_survive_save_and_load(tmp_path: Path) -> None:
    shipped = Weights.load(MODEL_PATH)
    assert shipped.probes is not None and shipped.fingerprint == fingerprint(shipped.probes)
    shipped.save(tmp_path / "w.npz")
    assert Weights.load(tmp_path / "w.npz").fingerprint == shipped.fingerprint
    replace(shipped, probes=None).save(tmp_path / "old.npz")
    assert Weights.load(tmp_path / "old.npz").probes is None


def _score(model: StoreWorthiness) -> float:
    clause = "Losing my job at the engineering company was hard"
    return model.probability(clause, clause, read(clause))


def test_loading_stale_weights_warns_and_still_scores(caplog) -> None:
    shipped = Weights.load(MODEL_PATH)
    assert shipped.probes is not None
    stale = shipped.probes.copy()
    stale[0, -1] = 1.0 - stale[0, -1]
    with caplog.at_level(logging.WARNING, logger="memstrata.extraction.worthiness"):
        fresh = _score(StoreWorthiness(weights=shipped))
        assert caplog.records == []
        kept = _score(StoreWorthiness(weights=replace(shipped, probes=stale)))
    assert kept == fresh  # the warning changes nothing the model computes
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "do not fit the feature code" in caplog.text and RETRAIN_COMMAND in caplog.text


def test_weights_without_probe_rows_are_not_checked(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="memstrata.extraction.worthiness"):
        score = _score(StoreWorthiness(weights=replace(Weights.load(MODEL_PATH), probes=None)))
    assert 0.0 < score < 1.0 and caplog.records == []
    assert np.isfinite(score)
