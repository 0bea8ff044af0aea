"""Every contradiction pair ends with one current value and the old one in history (offline and LLM)."""

from __future__ import annotations

import pytest
from memstrata_bench.contradictions import MODES, PAIRS, Pair, run_pair


def cases() -> list[object]:
    return [pytest.param(pair, mode, id=f"{mode}-{pair.later[:40]}") for mode in MODES for pair in PAIRS]


@pytest.mark.parametrize(("pair", "mode"), cases())
def test_pair_ends_with_one_current_value(pair: Pair, mode: str) -> None:
    result = run_pair(pair, mode, embedder="hashing:64")
    assert result["passed"], result
    if mode == "llm" and result["llm_calls"] == 0:
        assert result["history"], "decided by the rules alone (a retraction or an older statement)"
