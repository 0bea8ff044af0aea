"""LongMemEval: reading the upstream format, the paper's metrics, and a small real run of the command."""

from __future__ import annotations

import gzip
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from memstrata_bench import longmemeval_data as lme
from memstrata_bench.cli import main

from memstrata import InvalidInput


def _question(qid: str, kind: str, question: str, asked: str, sessions: list[tuple[str, str, list[Any]]]) -> Any:
    return {
        "question_id": qid,
        "question_type": kind,
        "question": question,
        "answer": "-",
        "question_date": asked,
        "haystack_session_ids": [s[0] for s in sessions],
        "haystack_dates": [s[1] for s in sessions],
        "haystack_sessions": [s[2] for s in sessions],
        "answer_session_ids": [s[0] for s in sessions if any(t.get("has_answer") for t in s[2])],
    }


def _turn(role: str, text: str, evidence: bool = False) -> dict[str, Any]:
    return {"role": role, "content": text, **({"has_answer": True} if evidence else {})}


FILLER = [
    (
        "filler_1",
        "2023/04/02 (Sun) 10:00",
        [
            _turn("user", "Can you suggest a pasta recipe?"),
            _turn("assistant", "Try a simple carbonara with eggs and pecorino."),
        ],
    ),
    (
        "filler_2",
        "2023/04/20 (Thu) 18:30",
        [
            _turn("user", "How do I fix a squeaky door hinge?"),
            _turn("assistant", "A drop of oil on the hinge pin usually helps."),
        ],
    ),
]
DATA = [
    _question(
        "q1",
        "single-session-user",
        "What breed is my new puppy?",
        "2023/05/24 (Wed) 09:14",
        [
            *FILLER,
            (
                "answer_1",
                "2023/05/10 (Wed) 08:00",
                [
                    _turn("user", "I just adopted a beagle puppy named Max!", True),
                    _turn("assistant", "Congratulations on adopting Max!"),
                ],
            ),
            ("late_1", "2023/05/24 (Wed) 20:00", [_turn("user", "The beagle puppy chewed my shoes today.", True)]),
        ],
    ),
    _question("q2_abs", "single-session-user", "What breed is my cat?", "2023/05/24 (Wed) 09:14", FILLER),
]


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json.gz"
    path.write_bytes(gzip.compress(json.dumps(DATA).encode()))
    return path


def test_load_leaves_out_abstention_and_keeps_turn_evidence(lme_file: Path) -> None:
    (case,) = lme.load(lme_file)
    assert case.question_id == "q1" and case.asked_at == datetime(2023, 5, 24, 9, 14, tzinfo=UTC)
    assert case.evidence_turns == ("answer_1:0", "late_1:0")
    assert case.answer_sessions == ("answer_1", "late_1")
    assert len(case.conversation.turns) == 7 and case.conversation.questions[0].asked_at == case.asked_at
    assert lme.session_of("answer_1:0") == "answer_1"


def test_visible_until_is_the_end_of_the_questions_day() -> None:
    assert lme.visible_until(datetime(2023, 5, 24, 9, 14, tzinfo=UTC)) == datetime(
        2023, 5, 24, 23, 59, 59, 999999, tzinfo=UTC
    )


def test_metrics_match_the_papers_definitions() -> None:
    ranked = ["a", "x", "b", "y"]
    assert lme.recall_any(ranked, ["b", "z"], 3) == 1.0 and lme.recall_all(ranked, ["b", "z"], 3) == 0.0
    assert lme.recall_fraction(ranked, ["a", "b", "z", "y"], 3) == 0.5
    assert lme.ndcg_any(ranked, ["a"], 10, 4) == 1.0
    assert lme.ndcg_any(ranked, ["b"], 10, 4) == pytest.approx(1 / math.log2(3))
    assert lme.ndcg_any(ranked, ["q"], 10, 4) == 0.0
    assert lme.session_ranking(["s1:3", "s2:0", "s1:0"]) == ["s1", "s2"]
    assert lme.mean_metrics([{"m": 1.0, "t": 0.5}, {"m": 0.0}]) == {"m": 0.5, "t": 0.5}


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InvalidInput, match="LongMemEval format"):
        lme.load(tmp_path / "bad.json")
    with pytest.raises(InvalidInput, match="cannot read"):
        lme.load(tmp_path / "missing.json")
    with pytest.raises(InvalidInput, match="unrecognized LongMemEval date"):
        lme.parse_date("24 May 2023")


@pytest.mark.parametrize("granularity", ["turn", "session"])
def test_the_command_finds_the_evidence_as_of_the_question(
    lme_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], granularity: str
) -> None:
    code = main(
        ["longmemeval", "--data", str(lme_file), "--granularity", granularity, "--out", str(tmp_path), "--json"]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["questions"] == 1 and result["granularity"] == granularity
    overall = result["overall"]
    assert overall["session_recall_all@10"] == 1.0  # the same-day session after the question's minute counts
    keys = {
        "session_recall_any@5",
        "session_recall_any@10",
        "session_recall_all@5",
        "session_recall_all@10",
        "session_ndcg@10",
    }
    assert keys <= set(overall) and set(result["by_type"]) == {"single-session-user"}
    if granularity == "turn":
        assert overall["turn_recall@10"] == 1.0 and overall["turn_recall@50"] == 1.0
    assert {"search_ms_p50", "search_ms_p95"} <= set(result)
    assert (tmp_path / f"longmemeval-{granularity}.json").exists()
