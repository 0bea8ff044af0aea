"""The study's data: exactly the trainer's labelled turns and clause units (`train_disclosure`), with
the message each unit came from. The blind splits are excluded by the trainer (`BLIND`); `load`
checks that none of them is present."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from memstrata.bench import extraction_realistic as realistic  # noqa: E402
from memstrata.bench import train_disclosure as trainer  # noqa: E402
from memstrata.extraction.rules.learned import out_of_reach  # noqa: E402

LOCOMO = "/work/shared/data/locomo/locomo-dev.json"
LONGMEMEVAL = "/work/shared/data/longmemeval/longmemeval_s_dev100.json.gz"


@dataclass(frozen=True)
class StudyData:
    labelled: list[tuple[realistic.Turn, realistic.Label]]
    units: list[trainer.Unit]
    messages: list[str]
    """The text of the turn each unit is a clause of."""
    within_reach: list[bool]
    """`learned.out_of_reach` is false: a clause the learned path may store."""


def load(locomo: str = LOCOMO, longmemeval: str = LONGMEMEVAL) -> StudyData:
    labelled = trainer.labelled_turns(locomo, longmemeval)
    splits = {label.split for _, label in labelled}
    if splits & trainer.BLIND:
        raise RuntimeError(f"blind splits {sorted(splits & trainer.BLIND)} reached the study")
    units = trainer.units(labelled)
    text = {turn.id: turn.text for turn, _ in labelled}
    return StudyData(
        labelled=labelled,
        units=units,
        messages=[text[u.turn] for u in units],
        within_reach=[not out_of_reach(u.clause, u.reading) for u in units],
    )
