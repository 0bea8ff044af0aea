"""The extraction benchmark: scoring arithmetic, file loading, and the rule extractor's floor."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from memstrata_bench.extraction import DEFAULT_PATH, GoldItem, load, main_json, run, score

from memstrata import InvalidInput, MemoryKind
from memstrata.extraction.base import Candidate

AT = datetime(2024, 5, 8, tzinfo=UTC)


def cand(category: str, attribute: str | None = None, value: str | None = None, when=None) -> Candidate:
    kinds = {"preference": MemoryKind.PREFERENCE, "event": MemoryKind.EVENT}
    return Candidate(
        kind=kinds.get(category, MemoryKind.FACT),
        content="x.",
        category=category,
        attribute=attribute,
        value=value,
        event_time=when,
    )


def test_score_counts_matches_misses_and_false_alarms():
    predictions = [
        [cand("identity", "location", "Berlin"), cand("preference", "likes", "tea")],  # 1 TP, 1 FP
        [],  # 1 FN
        [cand("event", "event", "x", AT)],  # TP with date
        [],  # clean negative
    ]
    gold = [
        [GoldItem("identity", "location", "Berlin")],
        [GoldItem("relation", "relation:wife", "Ana")],
        [GoldItem("event", date="2024-05-08")],
        [],
    ]
    result = score(predictions, gold)
    assert result["overall"] == {
        "precision": 0.6667,
        "recall": 0.6667,
        "f1": 0.6667,
        "tp": 2,
        "fp": 1,
        "fn": 1,
    }
    assert result["per_category"]["identity"]["precision"] == 1.0
    assert result["per_category"]["preference"]["precision"] == 0.0
    assert result["per_category"]["relation"]["recall"] == 0.0
    assert result["per_category"]["request"]["precision"] is None
    assert result["value_agreement"] == 1.0
    assert result["date_accuracy"] == 1.0
    assert result["negatives_clean"] == 1.0


def test_attribute_must_match_when_gold_names_one():
    result = score([[cand("identity", "employer", "Berlin")]], [[GoldItem("identity", "location")]])
    assert result["overall"]["tp"] == 0
    assert score([[cand("identity", "employer")]], [[GoldItem("identity")]])["overall"]["tp"] == 1


def test_matching_is_one_to_one():
    result = score([[cand("preference", "likes", "tea")]], [[GoldItem("preference"), GoldItem("preference")]])
    assert (result["overall"]["tp"], result["overall"]["fn"]) == (1, 1)


def test_score_rejects_misaligned_lists():
    with pytest.raises(InvalidInput):
        score([[]], [])


def test_load_reports_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"id": "a", "text": "hi", "at": "2024-05-08T10:00:00Z", "expected": []}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "b"}) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"bad.jsonl:2"):
        load(path)


def test_labelled_file_shape():
    examples = load(DEFAULT_PATH)
    assert len(examples) >= 170
    negatives = [e for e in examples if not e.expected]
    assert 0.25 <= len(negatives) / len(examples) <= 0.4
    assert sum(e.split == "heldout" for e in examples) >= 40
    categories = {item.category for e in examples for item in e.expected}
    assert categories == {
        "preference",
        "identity",
        "relation",
        "event",
        "request",
        "open_item",
        "instruction",
        "entity",
    }
    assert len({e.id for e in examples}) == len(examples)


def test_rule_extractor_meets_its_targets_on_both_splits():
    result = run(DEFAULT_PATH)
    for split in ("dev", "heldout"):
        assert result[split]["overall"]["precision"] >= 0.85, split
        assert result[split]["overall"]["recall"] >= 0.7, split
    assert result["all"]["examples"] == len(load(DEFAULT_PATH))


def test_main_json_is_json_serializable():
    result = main_json(DEFAULT_PATH)
    assert json.loads(json.dumps(result))["benchmark"] == "extraction"
