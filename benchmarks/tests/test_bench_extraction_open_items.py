"""The open-item measure: cue sentences drawn from a LongMemEval file, scored by the real extractor."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata_bench import extraction_open_items as bench


def _write(tmp_path: Path, turns: list[str]) -> Path:
    session = [{"role": "user", "content": text} for text in turns]
    row = {
        "question_id": "q1",
        "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00"],
        "haystack_sessions": [session],
    }
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    return path


def test_only_cue_sentences_are_drawn_and_scored(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            "I still need to renew my passport before June.",
            "Do you think I should get a matte screen protector?",
            "We went hiking in the Alps last summer.",
        ],
    )
    drawn = {sentence: turn_id for turn_id, sentence, _ in bench.cue_sentences(path)}
    assert set(drawn) == {
        "I still need to renew my passport before June.",
        "Do you think I should get a matte screen protector?",
    }
    labels = {drawn["I still need to renew my passport before June."]: True}
    labels[drawn["Do you think I should get a matte screen protector?"]] = False
    result = bench.evaluate(path, labels)
    assert (result["sentences"], result["open_items"], result["found"]) == (2, 1, 1)
    assert result["recall"] == 1.0 and result["precision"] == 1.0 and result["false_positives"] == []


def test_the_shipped_labels_are_unique_ids_of_both_kinds() -> None:
    rows = [json.loads(line) for line in bench.LABELS.read_text(encoding="utf-8").splitlines()]
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) >= 60
    assert all(set(row) == {"id", "split", "open_item"} and row["id"].startswith("longmemeval:") for row in rows)
    assert {row["split"] for row in rows} == set(bench.SPLITS)
    assert {row["open_item"] for row in rows} == {True, False}
