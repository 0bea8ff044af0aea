"""The realistic-chat extraction benchmark: turns drawn from the data files by hash, labels kept apart."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from memstrata_bench import extraction_realistic as realistic
from memstrata_bench import train_disclosure
from memstrata_bench.extraction_judged import key

from memstrata import MemoryKind
from memstrata.extraction.base import Candidate
from memstrata.extraction.rules import RuleExtractor

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _memory(content: str, *, day: str | None = None) -> Candidate:
    when = datetime.fromisoformat(day).replace(tzinfo=UTC) if day else None
    return Candidate(kind=MemoryKind.EVENT, content=content, category="event", event_time=when)


def _result(text: str, label: realistic.Label, *memories: Candidate) -> realistic.TurnResult:
    turn = realistic.Turn("locomo:c:D1:1", text, AT, "Ann", label.split)
    return realistic.TurnResult(turn, label, memories)


def test_an_item_is_covered_by_its_words_and_date() -> None:
    item = realistic.Item(("pottery", "class"), "2023-05-07")
    assert realistic.covers(item, _memory("Ann took a pottery class on 7 May 2023.", day="2023-05-07"))
    assert realistic.covers(item, _memory("Ann took a pottery class on 7 May 2023."))  # the date in the text
    assert not realistic.covers(item, _memory("Ann took a pottery class.", day="2023-05-08"))
    assert realistic.covers(item, _memory("Ann took a pottery class."), with_date=False)
    assert realistic.covers(realistic.Item(("love", "turtles")), _memory("Nate loves turtles."))


def test_score_counts_recall_precision_and_forbidden_words() -> None:
    label = realistic.Label((realistic.Item(("violin",)), realistic.Item(("running",))), (("wig",),), "dev")
    hit = _memory("Ann plays the violin.")
    wrong = _memory("Ann bought a wig.")
    unknown = _memory("Ann has a busy week.")
    result = _result("I play the violin. I bought a wig, kidding. Busy week.", label, hit, wrong, unknown)
    judged_ok = {key(result.turn.message(), unknown): True, key(result.turn.message(), wrong): True}
    scores = realistic.score([result], judged_ok)
    assert (scores["items"], scores["covered"], scores["recall"]) == (2, 1, 0.5)
    # the forbidden memory is wrong whatever its judgment; the judged one counts as correct
    assert (scores["memories"], scores["correct"], scores["precision"]) == (3, 2, 0.6667)
    assert scores["forbid_violated"] == 1 and scores["unjudged"] == 0
    assert realistic.score([result], {})["unjudged"] == 1


def _data(folder: Path) -> tuple[Path, Path]:
    locomo = [
        {
            "sample_id": f"conv-{n}",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I took a pottery class yesterday!"},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "Wow, what did you make?"},
                ],
            },
            "event_summary": {},
        }
        for n in range(3)
    ]
    lme = [
        {
            "question_id": "q1",
            "haystack_session_ids": ["s1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"],
            "haystack_sessions": [[{"role": "user", "content": "Hi there. I keep two beehives in my garden."}]],
        }
    ]
    (folder / "locomo.json").write_text(json.dumps(locomo))
    with gzip.open(folder / "lme.json.gz", "wt", encoding="utf-8") as handle:
        json.dump(lme, handle)
    return folder / "locomo.json", folder / "lme.json.gz"


def test_turns_are_sampled_by_hash_and_split_by_conversation(tmp_path: Path) -> None:
    locomo, lme = _data(tmp_path)
    first = realistic.turns(locomo, lme)
    assert first == realistic.turns(locomo, lme)  # stable, no seed
    assert {t.id for t in first} >= {"locomo:conv-0:D1:1", "longmemeval:s1:0:1"}
    held = {t.id.split(":")[1] for t in first if t.split == "heldout" and t.id.startswith("locomo")}
    assert len(held) == realistic.HELDOUT_CONVERSATIONS
    [sentence] = [t for t in first if t.id.startswith("longmemeval")]
    assert sentence.text == "I keep two beehives in my garden."  # "Hi there." has no first person


def test_evaluate_reads_the_text_from_the_data_and_only_labels_from_the_repository(tmp_path: Path) -> None:
    locomo, lme = _data(tmp_path)
    rows = [
        {"id": "locomo:conv-0:D1:1", "split": "dev", "items": [{"words": ["pottery", "class"], "date": "2023-05-07"}]},
        {"id": "locomo:conv-0:D1:2", "split": "dev", "items": []},
        {"id": "longmemeval:s1:0:1", "split": "dev", "items": [{"words": ["beehives"]}]},
    ]
    (tmp_path / "realistic-others-labels.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    labels_text = (tmp_path / "realistic-others-labels.jsonl").read_text()
    assert "pottery class yesterday" not in labels_text
    out, results = realistic.evaluate(locomo, lme, labels_dir=tmp_path, extractor=RuleExtractor(), splits=("dev",))
    assert out["dev"]["items"] == 2 and out["dev"]["recall"] == 1.0
    assert out["dev"]["precision"] == 1.0 and out["dev"]["unjudged"] == 0
    assert realistic.per_item(results)["locomo:conv-0:D1:1"] == [True]


def test_the_second_draw_continues_the_hash_order_of_the_first(tmp_path: Path) -> None:
    locomo, _ = _data(tmp_path)
    first = realistic.locomo_turns(locomo, 1)
    both = realistic.locomo_turns(locomo, 1 + 1)
    assert len(first) == 3 and len(both) == 6
    assert {t.id for t in first} < {t.id for t in both}  # the second draw adds turns, never swaps the first
    assert realistic.SPLITS == (
        "dev",
        "heldout",
        "heldout2",
        "heldout3",
        "train",
        "train2",
        "heldout4",
        "train3",
        "train4",
    )


def test_new_draws_come_after_the_old_ones_and_leave_them_unchanged() -> None:
    # the draws labelled before session 8 keep their place and size, so none of their turns moves
    assert realistic.DRAWS[:4] == (("heldout2", 12, 20), ("heldout3", 12, 20), ("train", 30, 50), ("train2", 30, 50))
    # heldout4 is drawn like heldout3, train3 and train4 like the first draw
    assert realistic.DRAWS[4:] == (("heldout4", 12, 20), ("train3", 30, 50), ("train4", 30, 50))


def _long_data(folder: Path, per_conversation: int, sentences: int) -> tuple[Path, Path]:
    """Two conversations of `per_conversation` turns and `sentences` LongMemEval user turns (one sentence each)."""
    session = [{"speaker": "Ann", "dia_id": f"D1:{n}", "text": f"I walked {n} miles."} for n in range(per_conversation)]
    conversation = {"speaker_a": "Ann", "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session}
    locomo = [{"sample_id": f"conv-{n}", "conversation": conversation} for n in range(2)]
    turns = [{"role": "user", "content": f"I keep {n} beehives in my garden."} for n in range(sentences)]
    lme = [
        {
            "question_id": "q1",
            "haystack_session_ids": ["s1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"],
            "haystack_sessions": [turns],
        }
    ]
    (folder / "locomo.json").write_text(json.dumps(locomo))
    (folder / "lme.json").write_text(json.dumps(lme))
    return folder / "locomo.json", folder / "lme.json"


def test_later_draws_follow_the_hash_order_and_carry_their_split(tmp_path: Path) -> None:
    sizes = [size for _, size, _ in realistic.DRAWS]
    sentence_sizes = [size for _, _, size in realistic.DRAWS]
    locomo, lme = _long_data(
        tmp_path, realistic.PER_CONVERSATION + sum(sizes) + 5, realistic.LONGMEMEVAL_SIZE + sum(sentence_sizes) + 5
    )
    every = realistic.turns(locomo, lme)
    first = {t.id: t.split for t in realistic.locomo_turns(locomo) + realistic.longmemeval_turns(lme)}
    # the first draw keeps its turns and its by-conversation split; the five turns past every draw are left out
    assert {t.id: t.split for t in every if t.id in first} == first
    assert len(every) == 2 * (realistic.PER_CONVERSATION + sum(sizes)) + realistic.LONGMEMEVAL_SIZE + sum(
        size for _, _, size in realistic.DRAWS
    )
    for conversation in ("conv-0", "conv-1"):
        ranked = [t.id for t in realistic.locomo_turns(locomo, 10_000) if t.id.split(":")[1] == conversation]
        split_of = {t.id: t.split for t in every}
        start = realistic.PER_CONVERSATION
        for name, size, _ in realistic.DRAWS:  # each draw: the next `size` turns in hash order
            assert {split_of[i] for i in ranked[start : start + size]} == {name}
            start += size
        assert not set(ranked[start:]) & set(split_of)
    sentences = [t for t in every if t.id.startswith("longmemeval")]
    assert [t.id for t in sentences] == [t.id for t in realistic.longmemeval_turns(lme, len(sentences))]
    assert [t.split for t in sentences[realistic.LONGMEMEVAL_SIZE :]] == [
        name for name, _, size in realistic.DRAWS for _ in range(size)
    ]


def test_evaluate_reports_the_new_splits(tmp_path: Path) -> None:
    locomo, lme = _long_data(tmp_path, realistic.PER_CONVERSATION + 60, 10)
    every = realistic.turns(locomo, lme)
    rows = [{"id": t.id, "split": t.split, "items": [{"words": ["walked"]}]} for t in every if t.split != "dev"]
    (tmp_path / "realistic-others-labels.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    out, _ = realistic.evaluate(locomo, lme, labels_dir=tmp_path, splits=("heldout3", "train"))
    assert out["heldout3"]["turns"] == 2 * realistic.THIRD_PER_CONVERSATION
    assert out["train"]["turns"] == 2 * realistic.FOURTH_PER_CONVERSATION  # 36 left per conversation, 30 drawn
    assert out["heldout3"]["locomo"]["items"] == out["heldout3"]["items"]


def test_a_split_labelled_in_part_counts_its_labelled_turns_only_and_the_blind_ones_are_never_trained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = [size for _, size, _ in realistic.DRAWS]
    sentence_sizes = [size for _, _, size in realistic.DRAWS]
    locomo, lme = _long_data(
        tmp_path, realistic.PER_CONVERSATION + sum(sizes), realistic.LONGMEMEVAL_SIZE + sum(sentence_sizes)
    )
    every = realistic.turns(locomo, lme)
    train3 = [t for t in every if t.split == "train3"]
    labelled = train3[: len(train3) // 2] + [t for t in every if t.split in ("heldout4", "train")]
    rows = [{"id": t.id, "split": t.split, "items": [{"words": ["walked"]}]} for t in labelled]
    (tmp_path / "realistic-others-labels.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    out, _ = realistic.evaluate(locomo, lme, labels_dir=tmp_path, splits=("train3", "train4"))
    # the unlabelled half of train3 is not scored as "no items", and unlabelled train4 scores nothing
    assert out["train3"]["turns"] == len(train3) // 2 and out["train3"]["items"] == len(train3) // 2
    assert out["train4"]["turns"] == 0 and out["train4"]["recall"] is None
    monkeypatch.setattr(realistic, "LABELS_DIR", tmp_path)
    trained = {turn.id for turn, _ in train_disclosure.labelled_turns(locomo, lme)}
    assert {"heldout3", "heldout4"} <= train_disclosure.BLIND
    assert trained == {t.id for t in labelled if t.split != "heldout4"}
