"""`bench heldout`: cross-validating the choice of ranking settings, and a small real run of the command."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from memstrata_bench import heldout
from memstrata_bench.cli import main
from test_bench_longmemeval import DATA

from memstrata.core.retrieval import HybridParams


def test_grid_starts_with_the_defaults_and_varies_the_tuned_settings() -> None:
    settings = heldout.grid()
    first = next(iter(settings.values()))
    assert first == HybridParams()
    assert len(settings) == len(heldout.VECTOR_WEIGHTS) * len(heldout.ROLE_BOOSTS) * len(heldout.WHEN_BOOSTS)
    assert {p.vector_weight for p in settings.values()} == set(heldout.VECTOR_WEIGHTS)


def test_choose_takes_the_best_mean_and_the_first_label_on_a_tie() -> None:
    scores = {"default": [1.0, 0.0, 0.5], "other": [0.0, 1.0, 0.5]}
    assert heldout.choose(scores, [0]) == "default"
    assert heldout.choose(scores, [1]) == "other"
    assert heldout.choose(scores, [0, 1]) == "default"  # a tie keeps the first label


def test_held_out_scores_each_fold_with_the_setting_chosen_without_it() -> None:
    # "a" wins on folds x and y, "b" only on z: z is scored with "a" (chosen on x+y), x and y with "a" too
    scores = {"a": [1.0, 1.0, 0.0], "b": [0.0, 0.0, 1.0]}
    result = heldout.held_out(scores, ["x", "y", "z"])
    assert [f["chosen"] for f in result["folds"]] == ["a", "a", "a"]
    assert result["estimate"] == pytest.approx(2 / 3, abs=1e-4)
    assert heldout.in_sample(scores) == {
        "default": pytest.approx(2 / 3, abs=1e-4),
        "best": {"label": "a", "recall@10": pytest.approx(2 / 3, abs=1e-4)},
        "all": {"a": 0.6667, "b": 0.3333},
    }
    # a setting that wins everywhere is chosen for every fold and the estimate equals its in-sample score
    sweep = heldout.held_out({"a": [0.5, 0.5], "b": [1.0, 1.0]}, ["x", "y"])
    assert sweep["estimate"] == 1.0 and {f["chosen"] for f in sweep["folds"]} == {"b"}
    assert heldout.held_out({}, []) == {"estimate": 0.0, "folds": []}


def test_a_choice_on_both_benchmarks_weighs_the_other_benchmark_as_much_as_this_one() -> None:
    # on this benchmark "b" wins the other folds by a little; on the other benchmark "a" wins by more
    scores = {"a": [0.5, 0.5, 0.5], "b": [0.6, 0.6, 0.6]}
    alone = heldout.held_out(scores, ["x", "y", "z"])
    assert [f["chosen"] for f in alone["folds"]] == ["b", "b", "b"]
    both = heldout.held_out(scores, ["x", "y", "z"], other={"a": 0.9, "b": 0.6})
    assert [f["chosen"] for f in both["folds"]] == ["a", "a", "a"]
    assert both["estimate"] == pytest.approx(0.5)
    # the other benchmark only breaks what this one leaves close: a large gain here still wins
    assert heldout.choose({"a": [0.0, 0.0], "b": [1.0, 1.0]}, [0, 1], {"a": 0.9, "b": 0.6}) == "b"


def test_chosen_on_both_scores_each_benchmark_without_its_own_fold() -> None:
    locomo = ({"a": [1.0, 0.0], "b": [0.0, 1.0]}, ["c1", "c2"], ["1", "2"], [0.0, 0.0])
    longmemeval = ({"a": [1.0, 1.0], "b": [0.0, 0.0]}, ["q1", "q2"], ["t", "t"], [0.0, 0.0])
    result = heldout.chosen_on_both(locomo, longmemeval)
    # LoCoMo alone is a tie broken by the other fold; LongMemEval's "a" decides every LoCoMo fold
    assert [f["chosen"] for f in result["locomo_leave_one_conversation_out"]["folds"]] == ["a", "a"]
    assert result["locomo_leave_one_conversation_out"]["estimate"] == pytest.approx(0.5)
    assert result["longmemeval_leave_one_question_out"]["chosen"] == {"a": 2}
    assert set(result) == {
        "locomo_leave_one_conversation_out",
        "longmemeval_leave_one_question_out",
        "longmemeval_leave_one_type_out",
    }


def test_held_out_reports_the_spread_over_folds_and_the_mean_of_each_group() -> None:
    # one question per fold (leave one question out): "a" is chosen for every fold but the last
    scores = {"a": [1.0, 1.0, 0.5, 0.0], "b": [0.0, 0.0, 0.0, 1.0]}
    result = heldout.held_out(scores, ["q1", "q2", "q3", "q4"], ["x", "x", "y", "y"], list_folds=False)
    assert "folds" not in result
    assert result["chosen"] == {"a": 4}
    assert result["spread"] == {"min": 0.0, "median": 0.75, "max": 1.0}
    assert result["by_group"] == {"x": 1.0, "y": 0.25}
    assert result["estimate"] == pytest.approx(0.625)
    assert heldout.group_means([1.0, 0.0, 0.5], ["b", "a", "b"]) == {"b": 0.75, "a": 0.0}


def test_the_command_estimates_both_benchmarks(
    locomo_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lme_file = tmp_path / "lme.json.gz"
    lme_file.write_bytes(gzip.compress(json.dumps(DATA).encode()))
    code = main(
        ["heldout", "--locomo", str(locomo_file), "--longmemeval", str(lme_file), "--out", str(tmp_path), "--json"]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    loco = result["locomo"]
    assert loco["questions"] == 8 and len(loco["leave_one_conversation_out"]["folds"]) == 2
    assert 0.5 <= loco["leave_one_conversation_out"]["estimate"] <= 1.0
    assert set(loco["in_sample"]["all"]) == set(result["grid"])
    lme = result["longmemeval"]
    assert lme["questions"] == 1 and lme["in_sample"]["default"] == 1.0
    assert [f["fold"] for f in lme["leave_one_type_out"]["folds"]] == ["single-session-user"]
    assert lme["leave_one_question_out"]["by_group"] == {"single-session-user": 1.0}
    assert set(lme["keyword"]["by_type"]) == {"single-session-user"}
    assert set(loco["keyword"]["by_category"]) == set(loco["leave_one_conversation_out"]["by_group"])
    assert (
        0.0
        <= loco["leave_one_conversation_out"]["spread"]["min"]
        <= loco["leave_one_conversation_out"]["spread"]["max"]
    )
    assert (tmp_path / "heldout.json").exists()


def test_the_command_needs_a_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["heldout"]) != 0
    assert "--locomo" in capsys.readouterr().err
