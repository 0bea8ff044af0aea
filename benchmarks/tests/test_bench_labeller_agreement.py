"""Agreement of two labellings: matched items, kappa on turns with an item, forbid sets (synthetic labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memstrata_bench import labeller_agreement as agree
from memstrata_bench.extraction_realistic import Item, Label

from memstrata import InvalidInput


def _label(*items: Item, forbid: tuple[tuple[str, ...], ...] = ()) -> Label:
    return Label(items, forbid, "heldout3")


FIRST = {
    "t:1": _label(Item(("pottery", "class"), "2023-05-07"), Item(("kid",))),
    "t:2": _label(Item(("loves", "cats"))),
    "t:3": _label(Item(("hiking",)), forbid=(("studio",),)),
    "t:4": _label(),
}
SECOND = {
    "t:1": _label(Item(("pottery",), "2023-05-07"), Item(("kids",))),
    "t:2": _label(Item(("love",))),
    "t:3": _label(forbid=(("dance", "studio"),)),
    "t:4": _label(forbid=(("books",),)),
}


def test_kappa_of_a_hand_computed_table() -> None:
    # observed 3/4; chance 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa (0.75 - 0.5) / 0.5
    assert agree.cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(0.5)
    assert agree.cohen_kappa([True, False], [True, False]) == pytest.approx(1.0)
    assert agree.cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)


def test_kappa_is_undefined_when_both_say_the_same_of_every_turn() -> None:
    assert agree.cohen_kappa([False, False], [False, False]) is None


def test_kappa_refuses_labellings_of_different_turns() -> None:
    with pytest.raises(InvalidInput, match="same turns"):
        agree.cohen_kappa([True], [True, False])
    with pytest.raises(InvalidInput, match="at least one"):
        agree.cohen_kappa([], [])


def test_word_sets_are_stemmed_like_the_benchmark() -> None:
    assert agree.word_set(["loves"]) == agree.word_set(["love"])
    assert agree.word_set(["Hiking", "trails"]) == agree.word_set(["hike", "trail"])


def test_items_match_by_overlapping_words_in_the_same_turn() -> None:
    result = agree.agreement(FIRST, SECOND)
    items = result["items"]
    assert (items["first"], items["second"]) == (4, 3)
    # first: pottery class, kid (t:1) and loves cats (t:2) are matched, hiking (t:3) is not
    assert items["first_matched_by_second"] == 3
    # second: pottery, kids (t:1) and love (t:2) are all matched
    assert items["second_matched_by_first"] == 3
    assert items["share_of_first_matched"] == 0.75
    assert items["share_of_second_matched"] == 1.0
    # only "kid" / "kids" is the same word set on both sides
    assert (items["first_with_same_words_in_second"], items["second_with_same_words_in_first"]) == (1, 1)
    # "pottery" and "love" lie inside the first labeller's word sets, never the other way round
    assert (items["first_covering_covers_second"], items["second_covering_covers_first"]) == (3, 1)
    assert (items["first_with_date"], items["second_with_date"]) == (1, 1)
    assert (items["first_dated_matched_same_date"], items["second_dated_matched_same_date"]) == (1, 1)
    assert result["turns"] == 4


def test_turns_with_an_item_and_with_a_forbid_set() -> None:
    result = agree.agreement(FIRST, SECOND)
    with_item = result["turns_with_item"]
    assert (with_item["both"], with_item["first_only"], with_item["second_only"], with_item["neither"]) == (2, 1, 0, 1)
    # observed 3/4; chance 3/4 * 2/4 + 1/4 * 2/4 = 1/2
    assert with_item["observed_agreement"] == 0.75
    assert with_item["kappa"] == pytest.approx(0.5)
    with_forbid = result["turns_with_forbid"]
    assert (with_forbid["first"], with_forbid["second"], with_forbid["both"]) == (1, 2, 1)
    sets = result["forbid_sets"]
    assert (sets["first"], sets["second"]) == (1, 2)
    assert (sets["first_matched_by_second"], sets["second_matched_by_first"]) == (1, 1)


def test_labellings_of_different_turns_are_refused() -> None:
    with pytest.raises(InvalidInput, match="same turns"):
        agree.agreement(FIRST, {k: v for k, v in SECOND.items() if k != "t:4"})
    with pytest.raises(InvalidInput, match="no turns"):
        agree.agreement({}, {})


def test_the_command_compares_one_split_and_writes_counts_only(tmp_path: Path) -> None:
    def write(path: Path, rows: dict[str, Label], extra: list[dict]) -> None:
        lines = [
            {
                "id": turn,
                "split": label.split,
                "items": [{"words": list(i.words)} | ({"date": i.date} if i.date else {}) for i in label.items],
                "forbid": [list(group) for group in label.forbid],
            }
            for turn, label in rows.items()
        ]
        path.write_text("\n".join(json.dumps(row) for row in lines + extra) + "\n", encoding="utf-8")

    other_split = [{"id": "t:9", "split": "dev", "items": [{"words": ["violin"]}]}]
    write(first := tmp_path / "first.jsonl", FIRST, other_split)
    write(second := tmp_path / "second.jsonl", SECOND, [])
    out = tmp_path / "agreement.json"
    assert agree.main(["--first", str(first), "--second", str(second), "--split", "heldout3", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    result = json.loads(text)
    assert result["turns"] == 4 and result["items"]["first"] == 4
    assert "pottery" not in text and "studio" not in text
    with pytest.raises(InvalidInput, match="split 'train'"):
        agree.main(["--first", str(first), "--second", str(second), "--split", "train", "--out", str(out)])


def test_a_matched_item_with_another_date_is_a_date_disagreement() -> None:
    first = {"t:1": _label(Item(("opening",), "2023-06-20"))}
    second = {"t:1": _label(Item(("grand", "opening"), "2023-06-19"))}
    items = agree.agreement(first, second)["items"]
    assert (items["first_matched_by_second"], items["second_matched_by_first"]) == (1, 1)
    assert (items["first_dated_matched_same_date"], items["second_dated_matched_same_date"]) == (0, 0)
    # a memory holding "grand opening" covers "opening"; one holding only "opening" does not cover both
    assert (items["first_covering_covers_second"], items["second_covering_covers_first"]) == (0, 1)


def test_the_command_compares_only_the_asked_split_of_files_holding_several(tmp_path: Path) -> None:
    def row(turn: str, split: str, *required: str) -> str:
        return json.dumps({"id": turn, "split": split, "items": [{"words": list(required)}] if required else []})

    # both files hold two splits; heldout3 agrees fully, heldout4 not at all
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join([row("a", "heldout3", "pottery"), row("b", "heldout4", "camping")]) + "\n")
    second = tmp_path / "second.jsonl"
    second.write_text("\n".join([row("a", "heldout3", "pottery"), row("b", "heldout4")]) + "\n")
    out = tmp_path / "agreement.json"
    args = ["--first", str(first), "--second", str(second), "--out", str(out)]
    agree.main([*args, "--split", "heldout3"])
    heldout3 = json.loads(out.read_text(encoding="utf-8"))
    agree.main([*args, "--split", "heldout4"])
    heldout4 = json.loads(out.read_text(encoding="utf-8"))
    assert (heldout3["split"], heldout3["turns"], heldout3["items"]["share_of_first_matched"]) == ("heldout3", 1, 1.0)
    assert (heldout4["split"], heldout4["turns"], heldout4["items"]["first"], heldout4["items"]["second"]) == (
        "heldout4",
        1,
        1,
        0,
    )
    assert heldout4["items"]["share_of_first_matched"] == 0.0
    assert heldout4["command"].endswith("--split heldout4")
