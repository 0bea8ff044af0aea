"""The updates measure: two sessions of a LongMemEval-shaped file learned offline, old value retired or not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memstrata_bench import extraction_updates as bench


def _question(old: str, new: str, between: str = "I like hiking in the Alps.") -> dict[str, Any]:
    def session(text: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted!"}]

    return {
        "question_id": "q1",
        "haystack_session_ids": ["old", "mid", "new"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00", "2023/06/01 (Thu) 10:00", "2023/07/02 (Sun) 10:00"],
        "haystack_sessions": [session(old), session(between), session(new)],
    }


def _label(old: str, new: str) -> dict[str, Any]:
    return {
        "question_id": "q1",
        "split": "dev",
        "old_session": "old",
        "old_turn": 0,
        "new_session": "new",
        "new_turn": 0,
        "old": old,
        "new": new,
    }


def _write(tmp_path: Path, question: dict[str, Any]) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([question]), encoding="utf-8")
    return path


def test_a_restated_value_counts_as_retired(tmp_path: Path) -> None:
    path = _write(
        tmp_path, _question("I've been learning Spanish for 3 months.", "I've been learning Spanish for 6 months now.")
    )
    for between in (False, True):
        result = bench.evaluate(path, [_label("3 months", "6 months")], between=between)
        assert (result["stored"], result["retired_and_new_current"], result["retire_rate"]) == (1, 1, 1.0)
        [item] = result["per_item"]
        assert item["old_still_current"] == 0 and item["new_memories"] == 1
        assert item["sessions_learned"] == (3 if between else 2)


def test_an_unrelated_later_fact_leaves_the_old_value_current(tmp_path: Path) -> None:
    path = _write(
        tmp_path, _question("I've been learning Spanish for 3 months.", "I've been playing guitar for 6 months now.")
    )
    result = bench.evaluate(path, [_label("3 months", "6 months")])
    assert (result["stored"], result["retired_and_new_current"], result["retire_rate"]) == (1, 0, 0.0)
    assert result["per_item"][0]["old_still_current"] == 1


def test_an_old_value_never_stored_is_left_out_of_the_rate(tmp_path: Path) -> None:
    path = _write(tmp_path, _question("What should I cook tonight?", "I've been learning Spanish for 6 months now."))
    result = bench.evaluate(path, [_label("3 months", "6 months")])
    assert (result["items"], result["stored"], result["retire_rate"]) == (1, 0, None)


def test_the_shipped_labels_name_two_sessions_and_two_markers() -> None:
    rows = bench.load_labels()
    assert len({row["question_id"] for row in rows}) == len(rows) >= 17
    assert {row["split"] for row in rows} == set(bench.SPLITS)
    for row in rows:
        assert set(row) == {"question_id", "split", "old_session", "old_turn", "new_session", "new_turn", "old", "new"}
        assert row["old_session"] != row["new_session"] and row["old"] and row["new"] and len(row["old"]) < 40
