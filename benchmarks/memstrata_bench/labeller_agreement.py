"""How much two people's labels of the same realistic-chat turns agree (pure; counts only, never text).

Two label files in the format of `extraction_realistic` (ids, items, must-not-contain sets) are compared
on the turns of one split:

- an *item* of one labeller is matched when the other labeller has an item of the same turn whose required
  words overlap (one content word in common, stemmed as in the extraction benchmark); beyond that, counted
  are the matched items whose partner has the very same words, and those whose partner's words are all
  among their own (so that a memory covering the item covers the other labeller's item too);
- a turn *has an item* (or *has a forbid set*) for a labeller when that labeller gave it at least one; the
  two labellers' yes/no per turn are compared with Cohen's kappa (agreement beyond what each labeller's
  own rate of "yes" would give by chance);
- a *forbid set* is matched like an item: the other labeller forbids, in the same turn, a set sharing a word;
- a matched item's *date* agrees when the other labeller's overlapping item names the same date (or none).

`python -m memstrata_bench.labeller_agreement --first A.jsonl --second B.jsonl --split heldout3 --out F`
writes the figures of that one split as JSON (a labels file may hold several splits, e.g. the second
labeller's heldout3 and heldout4 rows; the others are ignored) with the command that made them; nothing
of the turns' text or the labels' words is written or printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memstrata import InvalidInput

from .extraction_realistic import Item, Label, load_labels
from .overlap import words


def word_set(required: Sequence[str]) -> frozenset[str]:
    """A label's required words as the benchmark compares them: stemmed, and without a final "e" (so that
    "love" and "loves" are one word), the normalisation `extraction_realistic` uses to cover an item."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("e") else w for word in required for w in words(word))


def cohen_kappa(first: Sequence[bool], second: Sequence[bool]) -> float | None:
    """Cohen's kappa of two yes/no labellings of the same turns; None when chance agreement is already
    total (both labellers said the same thing of every turn), where kappa is undefined."""
    if len(first) != len(second):
        raise InvalidInput(f"kappa needs two labellings of the same turns, got {len(first)} and {len(second)}")
    if not first:
        raise InvalidInput("kappa needs at least one turn")
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    yes_first, yes_second = sum(first) / n, sum(second) / n
    chance = yes_first * yes_second + (1 - yes_first) * (1 - yes_second)
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def _overlapping(required: Sequence[str], others: Sequence[Sequence[str]]) -> list[frozenset[str]]:
    mine = word_set(required)
    return [theirs for theirs in map(word_set, others) if mine & theirs]


def _item_counts(own: Sequence[Item], other: Sequence[Item]) -> Counter[str]:
    """Counts over `own` items against the `other` labeller's items of the same turn."""
    counts: Counter[str] = Counter(items=len(own), dated=sum(item.date is not None for item in own))
    for item in own:
        mine = word_set(item.words)
        partners = [o for o in other if mine & word_set(o.words)]
        if not partners:
            continue
        counts["matched"] += 1
        counts["same_words"] += any(word_set(o.words) == mine for o in partners)
        # Every memory that covers this item (holds all its words) also covers such a partner.
        counts["covering_covers_other"] += any(word_set(o.words) <= mine for o in partners)
        counts["dated_same_date"] += item.date is not None and any(o.date == item.date for o in partners)
    return counts


def _turn_table(first: Sequence[bool], second: Sequence[bool]) -> dict[str, Any]:
    pairs = list(zip(first, second, strict=True))
    kappa = cohen_kappa(first, second)
    return {
        "first": sum(first),
        "second": sum(second),
        "both": sum(a and b for a, b in pairs),
        "first_only": sum(a and not b for a, b in pairs),
        "second_only": sum(b and not a for a, b in pairs),
        "neither": sum(not a and not b for a, b in pairs),
        "observed_agreement": round(sum(a == b for a, b in pairs) / len(pairs), 3),
        "kappa": None if kappa is None else round(kappa, 3),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def agreement(first: Mapping[str, Label], second: Mapping[str, Label]) -> dict[str, Any]:
    """Item, turn and forbid agreement of two labellings of the same turns (both keyed by turn id)."""
    if set(first) != set(second):
        missing = len(set(first) ^ set(second))
        raise InvalidInput(f"the two labellings must cover the same turns; {missing} turn ids are in only one")
    if not first:
        raise InvalidInput("no turns to compare")
    ids = sorted(first)
    counts: dict[str, Counter[str]] = {"first": Counter(), "second": Counter()}
    for turn in ids:
        labels = {"first": first[turn], "second": second[turn]}
        for who, other in (("first", "second"), ("second", "first")):
            own, theirs = labels[who], labels[other]
            counts[who] += _item_counts(own.items, theirs.items)
            counts[who]["forbid"] += len(own.forbid)
            counts[who]["forbid_matched"] += sum(bool(_overlapping(group, theirs.forbid)) for group in own.forbid)
    one, two = counts["first"], counts["second"]
    return {
        "turns": len(ids),
        "items": {
            "first": one["items"],
            "second": two["items"],
            "first_matched_by_second": one["matched"],
            "second_matched_by_first": two["matched"],
            "share_of_first_matched": _share(one["matched"], one["items"]),
            "share_of_second_matched": _share(two["matched"], two["items"]),
            "first_with_same_words_in_second": one["same_words"],
            "second_with_same_words_in_first": two["same_words"],
            # a memory covering such an item of one labeller also covers an item of the other
            "first_covering_covers_second": one["covering_covers_other"],
            "second_covering_covers_first": two["covering_covers_other"],
            "first_with_date": one["dated"],
            "second_with_date": two["dated"],
            "first_dated_matched_same_date": one["dated_same_date"],
            "second_dated_matched_same_date": two["dated_same_date"],
        },
        "turns_with_item": _turn_table([bool(first[t].items) for t in ids], [bool(second[t].items) for t in ids]),
        "turns_with_forbid": _turn_table([bool(first[t].forbid) for t in ids], [bool(second[t].forbid) for t in ids]),
        "forbid_sets": {
            "first": one["forbid"],
            "second": two["forbid"],
            "first_matched_by_second": one["forbid_matched"],
            "second_matched_by_first": two["forbid_matched"],
        },
    }


def of_split(labels: Mapping[str, Label], split: str) -> dict[str, Label]:
    """The labels of one split; raise `InvalidInput` when the file has none of it."""
    chosen = {turn: label for turn, label in labels.items() if label.split == split}
    if not chosen:
        raise InvalidInput(f"no labelled turns of split {split!r}")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", required=True, help="the first labeller's labels file")
    parser.add_argument("--second", required=True, help="the second labeller's labels file")
    parser.add_argument("--split", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    first = of_split(load_labels(args.first), args.split)
    second = of_split(load_labels(args.second), args.split)
    command = " ".join(["python -m memstrata_bench.labeller_agreement", *(argv if argv is not None else sys.argv[1:])])
    result = {"split": args.split, "first": args.first, "second": args.second, "command": command}
    result |= agreement(first, second)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
