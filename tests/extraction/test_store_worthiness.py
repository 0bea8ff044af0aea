"""The learned store-worthiness path: features, the shipped weights, the trainer's fit, the extractor."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from memstrata_bench.train_disclosure import fit, fold_of

from memstrata.errors import ConfigurationError
from memstrata.extraction.base import Message
from memstrata.extraction.rules import RuleExtractor
from memstrata.extraction.rules.learned import asks_the_assistant, out_of_reach, without_comment
from memstrata.extraction.worthiness import CHEAP_FEATURES, SHIPPED, StoreWorthiness, Weights, cheap_features, read

AT = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)


def extract(text: str, extractor: RuleExtractor | None = None) -> list[str]:
    chosen = extractor or RuleExtractor()
    return [c.content for c in chosen.extract([Message("user", text, AT, speaker="Jon")])]


def test_cheap_features_of_a_first_person_clause() -> None:
    clause = "I ran the Berlin marathon in 3 hours with Sam"
    row = dict(zip(CHEAP_FEATURES, cheap_features(clause, read(clause)), strict=True))
    assert row["speaker_subject"] == 1.0
    assert sum(row[f"refusal_{r}"] for r in ("request", "attitude", "modal", "context", "thin")) == 0.0
    assert row["number"] == 1.0 and row["first_person"] == 1.0 and row["second_person"] == 0.0
    assert row["log_names"] == pytest.approx(np.log1p(2))  # Berlin, Sam
    assert row["question"] == 0.0


def test_cheap_features_name_the_refusal() -> None:
    clause = "I think it looks great"
    reading = read(clause)
    row = dict(zip(CHEAP_FEATURES, cheap_features(clause, reading), strict=True))
    assert reading.reason == "attitude" and row["refusal_attitude"] == 1.0
    assert row["speaker_subject"] == 1.0 and row["refusal_context"] == 0.0


def test_cheap_features_read_the_shape_of_a_disclosure() -> None:
    def row(clause: str) -> dict[str, float]:
        return dict(zip(CHEAP_FEATURES, cheap_features(clause, read(clause)), strict=True))

    hike = row("Last week I hiked the Teton Crest trail with my dog")
    assert hike["past_tense"] == 1.0 and hike["time_word"] == 1.0 and hike["liking"] == 0.0
    assert hike["log_specific_words"] >= np.log1p(3)  # hiked, Teton, Crest, trail, dog
    assert row("I've got two kids")["speaker_has"] == 1.0
    assert row("I love experimenting in the kitchen")["liking"] == 1.0
    plain = row("Thanks so much")
    assert plain["past_tense"] == plain["speaker_has"] == plain["liking"] == plain["time_word"] == 0.0


def test_a_reaction_to_something_just_said_is_out_of_reach() -> None:
    clause = "I like the sound of the Watermelon Basil Margarita"
    assert out_of_reach(clause, read(clause))
    always = RuleExtractor(worthiness=StoreWorthiness(weights=replace(SHIPPED.weights, threshold=0.0)))
    assert extract(clause + ".", always) == extract(clause + ".", RuleExtractor(worthiness=None))


def test_whether_a_message_asks_is_checked_only_when_a_clause_reaches_the_model(monkeypatch) -> None:
    from memstrata.extraction.rules import extractor as module

    asked: list[str] = []

    def counting(text: str) -> bool:
        asked.append(text)
        return asks_the_assistant(text)

    monkeypatch.setattr(module, "asks_the_assistant", counting)
    extract("Hi there! Thanks so much. What do you think?")
    assert asked == []  # no clause within reach: the message is never checked
    text = "Losing my job at the engineering company was hard. Dance gives me an escape from it all."
    extract(text)
    assert asked == [text]  # checked once for the whole message, however many clauses reach the model


def test_shipped_weights_fit_the_features() -> None:
    weights = SHIPPED.weights
    assert weights.coef.shape == (256 + len(CHEAP_FEATURES),)
    assert 0.0 < weights.threshold < 1.0


def test_weights_round_trip(tmp_path: Path) -> None:
    weights = replace(SHIPPED.weights, threshold=0.42)
    weights.save(tmp_path / "w.npz")
    loaded = Weights.load(tmp_path / "w.npz")
    assert loaded.threshold == 0.42
    assert np.allclose(loaded.coef, weights.coef, atol=1e-6)


def test_unreadable_weights_are_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "bad.npz").write_bytes(b"not a numpy archive")
    with pytest.raises(ConfigurationError):
        Weights.load(tmp_path / "bad.npz")
    with pytest.raises(ConfigurationError):
        extract(
            "Losing my job was hard, but I'm living my dream now.",
            RuleExtractor(worthiness=StoreWorthiness(tmp_path / "x.npz")),
        )


def test_fit_is_deterministic_and_separates() -> None:
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(200, 5))
    labels = (rows[:, 0] + 0.5 * rows[:, 1] > 0).astype(float)
    weights = np.ones(200)
    first, second = fit(rows, labels, weights, 1.0), fit(rows, labels, weights, 1.0)
    assert np.array_equal(first.coef, second.coef) and first.bias == second.bias
    accuracy = ((first.probabilities(rows) >= 0.5) == labels.astype(bool)).mean()
    assert accuracy > 0.95
    assert abs(fit(rows, labels, weights, 1000.0).coef).sum() < abs(first.coef).sum()  # L2 shrinks


def test_folds_keep_a_conversation_together() -> None:
    conversations = ["conv-26", "conv-30", "conv-41"]
    assert fold_of("locomo:conv-30:D1:3", conversations) == fold_of("locomo:conv-30:D9:14", conversations)
    assert fold_of("locomo:conv-26:D1:3", conversations) != fold_of("locomo:conv-30:D1:3", conversations)
    assert fold_of("longmemeval:s1:0:2", conversations) == fold_of("longmemeval:s1:4:0", conversations)


@pytest.mark.parametrize(
    "clause",
    [
        "Let's keep chasing our dreams and celebrating achievements",
        "tell me the command for creating a requirements file",
        "Here's a photo of us after one of the dance classes",
        "That's fantastic that your studio is expanding for the dancers",
        "Traveling is so eye-opening and exciting for everyone",
        "In Paris",
    ],
)
def test_out_of_reach(clause: str) -> None:
    assert out_of_reach(clause, read(clause))


def test_a_disclosure_in_no_rule_shape_is_in_reach() -> None:
    clause = "Losing my job at the engineering company was hard"
    assert not out_of_reach(clause, read(clause))


def test_comment_cut_only_when_set_off() -> None:
    assert without_comment("I went to Rome with my sister, it was great") == "I went to Rome with my sister"
    whole = "I created a plan for getting it made into a movie"
    assert without_comment(whole) == whole


def test_model_keeps_nothing_below_its_threshold_and_rules_alone_differ_only_by_it() -> None:
    text = "Losing my job at the engineering company was hard, but it pushed me to start my own dance studio."
    never = RuleExtractor(worthiness=StoreWorthiness(weights=replace(SHIPPED.weights, threshold=1.01)))
    always = RuleExtractor(worthiness=StoreWorthiness(weights=replace(SHIPPED.weights, threshold=0.0)))
    assert extract(text, never) == extract(text, RuleExtractor(worthiness=None))
    kept = extract(text, always)
    assert any("Jon's job" in c and "engineering company" in c for c in kept)  # third person, as said


def test_hard_refusals_stay_refused_at_any_threshold() -> None:
    always = RuleExtractor(worthiness=StoreWorthiness(weights=replace(SHIPPED.weights, threshold=0.0)))
    for text in (
        "Can you tell me what my best 5k time was?",
        "I'd like some ideas for my garden party next week.",
        "Let's keep chasing our dreams together.",
        "I love your suggestion about the Italian menu.",
    ):
        assert extract(text, always) == extract(text, RuleExtractor(worthiness=None)), text


def test_a_message_asking_the_assistant_leaves_its_background_to_the_rules() -> None:
    always = RuleExtractor(worthiness=StoreWorthiness(weights=replace(SHIPPED.weights, threshold=0.0)))
    text = "I'm trying to finalize my budget for the new house. Can you help me estimate the closing costs?"
    assert asks_the_assistant(text)
    assert extract(text, always) == extract(text, RuleExtractor(worthiness=None))
    assert not asks_the_assistant("Losing my job at the engineering company was hard. How about you?")


def test_the_model_loads_only_when_a_clause_reaches_it() -> None:
    model = StoreWorthiness()
    extract("Hi there! Thanks so much.", RuleExtractor(worthiness=model))
    assert model._loaded is None  # nothing in reach: neither weights nor embedder were loaded
    extract("Losing my job at the engineering company was hard.", RuleExtractor(worthiness=model))
    assert model._loaded is not None


def test_unjudged_cv_memories_are_written_once_each(tmp_path: Path) -> None:
    from memstrata_bench import extraction_realistic as realistic
    from memstrata_bench.extraction_judged import key
    from memstrata_bench.train_disclosure import _write_unjudged

    turn = realistic.Turn("locomo:conv-1:D1:1", "I ran the Berlin marathon. I baked bread today.", AT, "Jon", "train")
    label = realistic.Label(items=(realistic.Item(("berlin", "marathon")),), forbid=(), split="train")
    memories = tuple(RuleExtractor(worthiness=None).extract([turn.message()]))
    covered = [m for m in memories if realistic.covers(label.items[0], m)]
    others = [m for m in memories if m not in covered]
    assert covered and others  # the marathon covers the item; the bread matches no label
    result = realistic.TurnResult(turn, label, memories)
    out = tmp_path / "unjudged.jsonl"
    _write_unjudged([[result], [result]], {}, out)  # the same memory in two runs is listed once
    listed = [json.loads(line) for line in out.read_text().splitlines()]
    assert [entry["key"] for entry in listed] == [key(turn.message(), m) for m in others]
    _write_unjudged([[result]], {entry["key"]: False for entry in listed}, out)
    assert out.read_text() == ""  # judged memories are not asked again
