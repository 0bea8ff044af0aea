"""What a write changes in a user's BM25 statistics (pure: no database needed)."""

from __future__ import annotations

from memstrata_bench.postgres_parity import agreement

from memstrata.core.keyword_index import KeywordTerms
from memstrata.core.keyword_statistics import StatisticsChange, statistics_change
from memstrata.storage.postgres.keyword import ADD_DOCUMENTS, ADD_TOTALS, DROP_UNUSED, row_values, statistics_statements


def test_a_rewrite_counts_each_term_once_per_memory() -> None:
    change = statistics_change(
        removed=[(["tea", "green"], 5)],
        added=[(["tea", "black", "black"], 4), (["tea"], 2)],
    )
    assert change == StatisticsChange(memories=1, tokens=1, documents={"black": 1, "green": -1, "tea": 1})


def test_no_change_writes_nothing() -> None:
    assert statistics_statements("u", statistics_change([(["a"], 3)], [(["a"], 3)])) == []


def test_statements_add_then_drop_unused_then_totals() -> None:
    change = StatisticsChange(memories=-1, tokens=-4, documents={"a": -1, "b": 2})
    statements = statistics_statements("u", change)
    assert [statements[0][0].split(" VALUES ")[0], *(s for s, _ in statements[1:])] == [
        ADD_DOCUMENTS,
        DROP_UNUSED,
        ADD_TOTALS,
    ]
    assert statements[0][1] == ["u", "a", -1, "u", "b", 2]
    assert statements[1][1] == ["u", ["a"]]
    assert statements[2][1] == ["u", -1, -4]


def test_row_values_are_sorted_terms_with_their_frequencies() -> None:
    assert row_values(KeywordTerms({"tea": 1.5, "green": 1.0}, 7)) == [["green", "tea"], [1.0, 1.5], 7]


def test_agreement_of_two_rankings() -> None:
    same = agreement([["a", "b"], ["c", "d"]], [["a", "b"], ["d", "c"]])
    assert same == {"same_order": 0.5, "same_set": 1.0, "overlap": 1.0}
    assert agreement([["a", "b"]], [["a", "x"]])["overlap"] == 0.5
