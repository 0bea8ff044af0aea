"""Persona benchmark: its label file, its metrics and a small real run of the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memstrata_bench import persona
from memstrata_bench.cli import main

from memstrata import InvalidInput


def test_the_label_file_names_questions_haystacks_and_turn_ids_only() -> None:
    questions = persona.read_labels()
    assert len(questions) >= 10 and len({q["id"] for q in questions}) == len(questions)
    assert all(":" in t for q in questions for t in q["required"])


def test_a_required_turn_counts_through_its_text_or_what_was_learned_from_it() -> None:
    turns = {"s1:0": "I'm  vegetarian\nnow.", "s1:2": "I like walnut."}
    text = "Relevant memories:\n- [1 May 2024] user: I'm vegetarian now.\n- [1 May 2024] The user likes walnut."
    assert persona.in_context(["s1:0"], turns, text)
    assert not persona.in_context(["s1:0", "s1:2"], turns, text)
    assert persona.in_context(["s1:0", "s1:2"], turns, text, {"s1:2": ["The user likes walnut."]})
    assert persona.filler_lines("- [1 May 2024] user: Thanks, that's all for now.\n- [2 May 2024] user: I run.") == (
        1,
        2,
    )


def test_the_command_reports_required_turns_filler_and_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = [
        [
            "sa",
            [
                {"role": "user", "content": "I'm vegetarian and I love Casa Nova."},
                {"role": "assistant", "content": "Noted."},
            ],
        ],
        ["sb", [{"role": "user", "content": "Thanks, that's all for now."}]],
    ]
    case: dict[str, Any] = {
        "question_id": "q1",
        "haystack_session_ids": [s[0] for s in sessions],
        "haystack_sessions": [s[1] for s in sessions],
    }
    data, labels = tmp_path / "lme.json", tmp_path / "labels.json"
    data.write_text(json.dumps([case]), encoding="utf-8")
    labels.write_text(
        json.dumps(
            {
                "questions": [
                    {"id": "dinner", "haystack": "q1", "question": "plan a dinner for me", "required": ["sa:0"]}
                ]
            }
        ),
        encoding="utf-8",
    )
    assert main(["persona", "--data", str(data), "--labels", str(labels), "--budgets", "500", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["required_in_context@500"] == 1.0 and result["filler_share@500"] == 0.0
    assert 0 < result["context_tokens_mean@500"] <= 500
    labels.write_text(
        json.dumps({"questions": [{"id": "x", "haystack": "q1", "question": "plan", "required": ["sa:1"]}]})
    )
    with pytest.raises(InvalidInput, match="no user turn"):
        persona.run(data, labels=labels)
