"""Every extraction set but the blind ones, for the memstrata package this interpreter imports.

Writes one JSON object: LongMemEval dev (recall and judged precision), LoCoMo dev `event_summary` (recall
and judged precision), and the realistic chat written by others, split by split (never heldout3 or
heldout4, the blind splits), for `RuleExtractor()` and, with `--rules-alone`, `RuleExtractor(worthiness=
None)`. Labels and judgments are read from this repository's `benchmarks/extraction`, whatever package
is imported, so two versions of the code (run one after the other with their own PYTHONPATH) are scored
with the same judgments. Memories of the judged samples that no one has judged are listed (text
included, for judging; the output is not committed with them).

    PYTHONPATH=/tmp/main python benchmarks/extraction_sets.py --label before --out /tmp/before.json ...
    PYTHONPATH=$PWD python benchmarks/extraction_sets.py --label after --rules-alone --out /tmp/after.json ...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memstrata.bench import extraction_external, extraction_realistic
from memstrata.extraction.rules import RuleExtractor

JUDGMENTS = Path(__file__).resolve().parent / "extraction"
SPLITS = ("dev", "heldout", "heldout2", "train", "train2", "train3", "train4")
"""The realistic splits scored here: every one but the blind heldout3 and heldout4."""


def scores(extractor: RuleExtractor, locomo: str, longmemeval: str) -> dict:
    external = extraction_external.run(
        longmemeval=longmemeval, locomo=locomo, judgments_dir=JUDGMENTS, extractor=extractor
    )
    realistic, _ = extraction_realistic.evaluate(
        locomo, longmemeval, labels_dir=JUDGMENTS, extractor=extractor, splits=SPLITS
    )
    return {"external": external, "realistic_others": realistic}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--label", required=True, help="what this run is (before, after)")
    parser.add_argument("--rules-alone", action="store_true", help="also score RuleExtractor(worthiness=None)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import memstrata

    out = {
        "label": args.label,
        "package": str(Path(memstrata.__file__).parent),
        "default": scores(RuleExtractor(), args.locomo, args.longmemeval),
    }
    if args.rules_alone:
        out["rules_alone"] = scores(RuleExtractor(worthiness=None), args.locomo, args.longmemeval)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
