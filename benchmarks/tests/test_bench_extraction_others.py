"""Extraction measured on others' text: word overlap, the LongMemEval and LoCoMo runners, judged precision
and the CLI, on small files written here in each data set's format."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from memstrata_bench import extraction_locomo, extraction_longmemeval
from memstrata_bench.cli import main
from memstrata_bench.extraction_judged import judged_precision, key, load_judgments, sample
from memstrata_bench.overlap import contains_answer, coverage, words

from memstrata import InvalidInput, MemoryKind
from memstrata.extraction.base import Candidate, Message
from memstrata.extraction.rules import RuleExtractor


def test_words_stem_drop_stopwords_and_read_numbers():
    assert words("I attended the Nine meetings, $400,000!") == ["attend", "9", "meeting", "400000"]


def test_coverage_and_answer_containment():
    assert (
        coverage(
            "Caroline attends a support group.", "Caroline attended a support group yesterday.", ignore=["Caroline"]
        )
        == 1.0
    )
    assert coverage("Caroline paints a sunset.", "The user likes tea.", ignore=["Caroline"]) == 0.0
    assert contains_answer("nine months", "The user has been using it for 9 months.")
    assert not contains_answer("Yes", "The user said yes.")  # no content word: never "contained"


def test_answers_accept_the_alternative_in_brackets():
    assert extraction_longmemeval.answers("25 minutes and 50 seconds (or 25:50)") == (
        "25 minutes and 50 seconds",
        "25:50",
    )
    assert extraction_longmemeval.answers(120) == ("120",)


def _longmemeval_file(path: Path) -> Path:
    rows = [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "Which city do I live in?",
            "answer": "Lisbon",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["s1", "s2"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 09:00"],
            "haystack_sessions": [
                [
                    {"role": "user", "content": "Hi! By the way, I live in Lisbon now.", "has_answer": True},
                    {"role": "assistant", "content": "Lisbon is lovely."},
                ],
                [{"role": "user", "content": "What is a good pasta recipe?"}],
            ],
            "answer_session_ids": ["s1"],
        },
        {
            "question_id": "q2",
            "question_type": "knowledge-update",
            "question": "How many bikes do I own?",
            "answer": "4",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["s3"],
            "haystack_dates": ["2023/05/22 (Mon) 09:00"],
            "haystack_sessions": [[{"role": "user", "content": "I have 4 bikes, can you suggest a rack?"}]],
            "answer_session_ids": ["s3"],
        },
        {
            "question_id": "q3",
            "question_type": "knowledge-update",
            "question": "Did I go more often?",
            "answer": "Yes",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["s4"],
            "haystack_dates": ["2023/05/22 (Mon) 09:00"],
            "haystack_sessions": [[{"role": "user", "content": "I go to the gym a lot."}]],
            "answer_session_ids": ["s4"],
        },
        {
            "question_id": "q4_abs",
            "question_type": "single-session-user",
            "answer": "x",
            "question": "?",
            "question_date": "",
            "haystack_session_ids": [],
            "haystack_dates": [],
            "haystack_sessions": [],
            "answer_session_ids": [],
        },
    ]
    file = path / "lme.json.gz"
    with gzip.open(file, "wt", encoding="utf-8") as handle:
        json.dump(rows, handle)
    return file


def test_longmemeval_recall_counts_stated_answers_only(tmp_path):
    result, pairs = extraction_longmemeval.run(_longmemeval_file(tmp_path), RuleExtractor())
    assert result["single-session-user"] == {"questions": 1, "answered": 1}
    # "I have 4 bikes, can you suggest a rack?": the statement before the request is kept
    assert result["knowledge-update"] == {"questions": 1, "answered": 1}
    assert result["left_out_answer_not_stated"] == {"single-session-user": 0, "knowledge-update": 1}
    assert result["recall"] == 1.0 and result["user_turns"] == 2  # questions left out are not read
    [(message, candidate), (_, bikes)] = pairs
    assert message.at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert candidate.content == "The user lives in Lisbon."
    assert bikes.content == "The user has 4 bikes."


def test_longmemeval_rejects_other_files(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"x": 1}]))
    with pytest.raises(InvalidInput, match="not a LongMemEval file"):
        extraction_longmemeval.load(other)
    with pytest.raises(InvalidInput, match="not found"):
        extraction_longmemeval.load(tmp_path / "missing.json")


def _locomo_file(path: Path) -> Path:
    sample_ = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday, so powerful."},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "That's great! How was it?"},
            ],
        },
        "event_summary": {
            "events_session_1": {
                "Caroline": ["Caroline attends a support group."],
                "Melanie": ["Melanie paints a sunrise."],
                "date": "8 May, 2023",
            }
        },
    }
    file = path / "locomo.json"
    file.write_text(json.dumps([sample_]), encoding="utf-8")
    return file


def test_locomo_coverage_per_speaker_and_session(tmp_path):
    result, pairs = extraction_locomo.run(_locomo_file(tmp_path), RuleExtractor())
    assert (result["facts"], result["covered"], result["recall"]) == (2, 1, 0.5)
    [(message, candidate)] = pairs
    assert (
        message.speaker == "Caroline"
        and candidate.content == "Caroline went to a support group on 7 May 2023, so powerful."
    )


def _pair(text: str, content: str) -> tuple[Message, Candidate]:
    message = Message(role="user", content=text, at=datetime(2024, 1, 1, tzinfo=UTC))
    return message, Candidate(kind=MemoryKind.FACT, content=content, category="identity")


def test_judged_precision_uses_the_stable_sample_and_lists_the_rest(tmp_path):
    pairs = [_pair(f"message {n}", f"Memory {n}.") for n in range(10)]
    chosen = sample(pairs, 4)
    assert [k for k, _, _ in chosen] == sorted(key(m, c) for m, c in pairs)[:4]
    judgments = tmp_path / "judgments-x.jsonl"
    judgments.write_text("\n".join(json.dumps({"key": k, "ok": i != 0}) for i, (k, _, _) in enumerate(chosen[:3])))
    result = judged_precision(pairs, load_judgments(judgments), size=4)
    assert (result["sample"], result["judged"], result["correct"], result["precision"]) == (4, 3, 2, 0.6667)
    assert [u["key"] for u in result["unjudged"]] == [chosen[3][0]]
    assert load_judgments(tmp_path / "none.jsonl") == {}


def test_a_malformed_judgment_names_its_line(tmp_path):
    bad = tmp_path / "judgments-x.jsonl"
    bad.write_text('{"key": "a", "ok": true}\n{"ok": true}\n')
    with pytest.raises(InvalidInput, match=r"judgments-x.jsonl:2"):
        load_judgments(bad)


def test_cli_reports_others_beside_the_labelled_set(tmp_path, capsys):
    out = tmp_path / "results"
    code = main(
        [
            "extraction",
            "--longmemeval",
            str(_longmemeval_file(tmp_path)),
            "--locomo",
            str(_locomo_file(tmp_path)),
            "--judgments",
            str(tmp_path),
            "--sample",
            "5",
            "--out",
            str(out),
            "--name",
            "extraction-others",
            "--json",
        ]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((out / "extraction-others.json").read_text())
    assert printed["labelled_by"].startswith("the project (self-written")
    assert printed["others"]["longmemeval"]["recall"] == 1.0
    assert printed["others"]["locomo"]["judged"] == {
        "sample": 1,
        "judged": 0,
        "correct": 0,
        "precision": None,
        "unjudged_count": 1,
    }
    assert written["others"]["locomo"]["recall"] == 0.5


def test_speed_ab_alternates_two_versions_of_the_code(tmp_path):
    from memstrata_bench import extraction_speed

    here = Path(extraction_speed.__file__).resolve().parents[2]
    result = extraction_speed.run(_locomo_file(tmp_path), here, rounds=1)
    assert [r["version"] for r in result["runs"]] == ["before", "after"]
    assert all(r["turns"] == result["runs"][0]["turns"] > 0 for r in result["runs"])
    assert result["ratio"] > 0
