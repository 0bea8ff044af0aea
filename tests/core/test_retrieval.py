"""The final-ranking functions: normalization, fusion, speaker boost, index text, and the whole recipe
run end to end over a real SQLite FTS5 table and the shipped static embedder."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from memstrata.core.retrieval import (
    KEYWORD_COLUMN_WEIGHTS,
    KEYWORD_COLUMNS,
    CandidateFacts,
    HybridParams,
    RankedHit,
    boost_speakers,
    context_text,
    date_text,
    hybrid_rank,
    index_columns,
    named_speakers,
    normalize,
    rank_scores,
    reciprocal_rank_fusion,
    smooth_neighbours,
    weighted_sum,
    without_names,
)
from memstrata.core.temporal import TimeWindow
from memstrata.embedders import StaticEmbedder
from memstrata.errors import InvalidInput
from memstrata.storage.sqlite import fts_query

HITS = [("a", 9.0), ("b", 5.0), ("c", 1.0)]


# -- normalize ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        pytest.param("minmax", {"a": 1.0, "b": 0.5, "c": 0.0}, id="minmax"),
        pytest.param("max", {"a": 1.0, "b": 5 / 9, "c": 1 / 9}, id="max"),
        pytest.param("rank", {"a": 1.0, "b": 2 / 3, "c": 1 / 3}, id="rank"),
    ],
)
def test_normalize_methods(method: str, expected: dict[str, float]) -> None:
    got = normalize(HITS, method)  # type: ignore[arg-type]
    assert got == pytest.approx(expected)


def test_normalize_zscore_has_zero_mean_unit_variance() -> None:
    got = normalize(HITS, "zscore")
    values = list(got.values())
    assert sum(values) == pytest.approx(0.0)
    assert math.sqrt(sum(v * v for v in values) / len(values)) == pytest.approx(1.0)
    assert got["a"] > got["b"] > got["c"]


@pytest.mark.parametrize("method", ["minmax", "max", "zscore", "rank"])
def test_normalize_empty_and_constant_lists(method: str) -> None:
    assert normalize([], method) == {}  # type: ignore[arg-type]
    constant = normalize([("x", 2.0), ("y", 2.0)], method)  # type: ignore[arg-type]
    assert set(constant) == {"x", "y"}
    if method != "rank":
        assert constant["x"] == constant["y"]


def test_normalize_max_with_non_positive_scores_is_zero() -> None:
    assert normalize([("x", -1.0), ("y", -3.0)], "max") == {"x": 0.0, "y": 0.0}


def test_normalize_rejects_unknown_method() -> None:
    with pytest.raises(InvalidInput, match="unknown normalization 'sigmoid'"):
        normalize(HITS, "sigmoid")  # type: ignore[arg-type]


# -- fusion -------------------------------------------------------------------


def test_weighted_sum_counts_absent_as_zero_and_keeps_first_seen_order() -> None:
    fused = weighted_sum(
        {"keyword": [("a", 10.0), ("b", 0.0)], "vector": [("c", 0.9), ("a", 0.1)]},
        {"keyword": 0.8, "vector": 0.2},
    )
    assert list(fused) == ["a", "b", "c"]
    assert fused == pytest.approx({"a": 0.8 * 1.0 + 0.2 * 0.0, "b": 0.0, "c": 0.2})


def test_weighted_sum_needs_a_weight_per_list() -> None:
    with pytest.raises(InvalidInput, match=r"no weight given for \['vector'\]"):
        weighted_sum({"keyword": HITS, "vector": HITS}, {"keyword": 1.0})


def test_reciprocal_rank_fusion_sums_weighted_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([[("a", 3.0), ("b", 2.0)], [("b", 0.9)]], k=60, weights=[1.0, 2.0])
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 2 / 61})


def test_reciprocal_rank_fusion_rejects_mismatched_weights() -> None:
    with pytest.raises(InvalidInput, match="1 weights for 2 lists"):
        reciprocal_rank_fusion([HITS, HITS], weights=[1.0])


def test_smooth_neighbours_spreads_scores_and_adds_new_ids() -> None:
    smoothed = smooth_neighbours({"t2": 1.0, "t5": 0.5}, {"t2": ["t1", "t3"], "t5": ["t4"]}, 0.3)
    assert smoothed == pytest.approx({"t2": 1.0, "t5": 0.5, "t1": 0.3, "t3": 0.3, "t4": 0.15})


def test_rank_scores_breaks_ties_by_input_order() -> None:
    assert rank_scores({"b": 1.0, "a": 1.0, "c": 2.0}) == [("c", 2.0), ("b", 1.0), ("a", 1.0)]


# -- speakers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("What did Caroline research?", {"Caroline"}, id="name"),
        pytest.param("what are MELANIE's hobbies", {"Melanie"}, id="possessive-any-case"),
        pytest.param("When did Caroline and Melanie meet?", {"Caroline", "Melanie"}, id="both"),
        pytest.param("Who is Carol?", set(), id="no-prefix-match"),
        pytest.param("What did Anna Lee say?", {"Anna Lee"}, id="two-word-name"),
        pytest.param("What did Anna say?", set(), id="part-of-two-word-name"),
    ],
)
def test_named_speakers(query: str, expected: set[str]) -> None:
    assert named_speakers(query, ["Caroline", "Melanie", "Anna Lee", "Caroline"]) == expected


def test_boost_speakers_multiplies_only_named_speakers() -> None:
    boosted = boost_speakers({"a": 0.5, "b": 0.4, "c": 0.3}, {"a": "Jon", "b": "Gina"}, {"Gina"}, 1.0)
    assert boosted == pytest.approx({"a": 0.5, "b": 0.8, "c": 0.3})
    assert boost_speakers({"a": 0.5}, {"a": "Jon"}, set(), 1.0) == {"a": 0.5}


# -- index text ---------------------------------------------------------------


def test_context_text_keeps_the_last_turns_oldest_first() -> None:
    previous = ["one", "two", "three"]
    assert context_text(previous) == "two\nthree"
    assert context_text(previous, turns=5) == "one\ntwo\nthree"
    assert context_text([], turns=2) == ""
    assert context_text(previous, turns=0) == ""
    with pytest.raises(InvalidInput):
        context_text(previous, turns=-1)


def test_date_text_and_index_columns() -> None:
    assert date_text(datetime(2023, 5, 8, 13, 56)) == "8 May 2023"
    assert date_text(date(2022, 12, 31)) == "31 December 2022"
    assert index_columns("Nate: Yes!", ["Jo: a", "Nate: b", "Jo: Did you win?"], date(2022, 6, 1)) == (
        "Nate: Yes!",
        "Nate: b\nJo: Did you win?",
        "1 June 2022",
    )
    assert len(KEYWORD_COLUMNS) == len(KEYWORD_COLUMN_WEIGHTS)


# -- hybrid_rank --------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"depth": 0}, id="depth"),
        pytest.param({"vector_weight": 1.5}, id="vector-weight"),
        pytest.param({"normalization": "l2"}, id="normalization"),
        pytest.param({"fusion": "max"}, id="fusion"),
        pytest.param({"rrf_k": 0}, id="rrf-k"),
        pytest.param({"speaker_boost": -1.0}, id="speaker-boost"),
        pytest.param({"neighbour_weight": -0.1}, id="neighbour-weight"),
        pytest.param({"when_boost": -1.0}, id="when-boost"),
    ],
)
def test_hybrid_params_validate(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        HybridParams(**kwargs)  # type: ignore[arg-type]


def test_hybrid_rank_fuses_and_explains() -> None:
    keyword = [("k1", 12.0), ("both", 8.0), ("k2", 2.0)]
    vector = [("v1", 0.9), ("both", 0.7), ("k2", 0.1)]
    hits = hybrid_rank(keyword, vector, query="anything", params=HybridParams(vector_weight=0.2, speaker_boost=0.0))
    scores = {h.id: h.score for h in hits}
    assert scores == pytest.approx({"k1": 0.8, "both": 0.8 * 0.6 + 0.2 * 0.75, "k2": 0.0, "v1": 0.2}, abs=1e-9)
    assert [h.id for h in hits] == ["k1", "both", "v1", "k2"]
    both = next(h for h in hits if h.id == "both")
    assert both.components == pytest.approx({"keyword": 0.6, "vector": 0.75, "speaker_boost": 1.0, "time_match": 0.0})


def test_hybrid_rank_raises_timed_candidates_for_when_questions_only() -> None:
    keyword = [("plain", 10.0), ("timed", 8.0), ("low", 1.0)]
    facts = CandidateFacts(timed={"timed": True, "plain": False})
    when = hybrid_rank(keyword, [], query="When did Jon get mentored?", facts=facts)
    what = hybrid_rank(keyword, [], query="What did Jon get?", facts=facts)
    off = hybrid_rank(keyword, [], query="When did Jon get mentored?", facts=facts, params=HybridParams(when_boost=0))
    assert [h.id for h in when][:2] == ["timed", "plain"]
    assert [h.id for h in what][:2] == [h.id for h in off][:2] == ["plain", "timed"]


def test_hybrid_rank_matches_a_period_the_candidate_names() -> None:
    window = TimeWindow(datetime(2023, 11, 6, tzinfo=UTC), datetime(2023, 11, 13, tzinfo=UTC), timedelta(days=3))
    said = TimeWindow(datetime(2023, 11, 10, tzinfo=UTC), datetime(2023, 11, 11, tzinfo=UTC), timedelta(days=2))
    at = datetime(2023, 11, 17, tzinfo=UTC)
    facts = CandidateFacts(time_of={"a": at, "b": at}, periods_of={"b": [said]}, windows=[window])
    hits = hybrid_rank([("a", 10.0), ("b", 9.0), ("c", 1.0)], [], query="where was Tim", facts=facts)
    assert [h.id for h in hits][:2] == ["b", "a"]
    assert hits[0].components["time_match"] == 1.0


def test_hybrid_rank_boosts_the_named_speaker() -> None:
    keyword = [("jon1", 10.0), ("gina1", 9.0), ("gina2", 1.0)]
    speakers = {"jon1": "Jon", "gina1": "Gina", "gina2": "Gina"}
    plain = hybrid_rank(keyword, [], query="What did Gina open?", params=HybridParams(speaker_boost=0.0))
    boosted = hybrid_rank(keyword, [], query="What did Gina open?", speaker_of=speakers)
    assert [h.id for h in plain][:2] == ["jon1", "gina1"]
    assert [h.id for h in boosted][:2] == ["gina1", "jon1"]
    assert boosted[0].components["speaker_boost"] == 2.0


def test_hybrid_rank_depth_limit_and_rrf() -> None:
    keyword = [(f"k{i}", 100.0 - i) for i in range(80)]
    vector = [(f"v{i}", 1.0 - i / 100) for i in range(80)]
    hits = hybrid_rank(keyword, vector, query="q", params=HybridParams(depth=5), limit=7)
    assert len(hits) == 7
    assert {h.id for h in hybrid_rank(keyword, vector, query="q", params=HybridParams(depth=5))} == {
        *(f"k{i}" for i in range(5)),
        *(f"v{i}" for i in range(5)),
    }
    rrf = hybrid_rank(keyword, vector, query="q", params=HybridParams(fusion="rrf", vector_weight=0.5))
    assert rrf[0].score == pytest.approx(0.5 / 61)


def test_hybrid_rank_zscore_scores_are_shifted_before_the_boost() -> None:
    keyword = [("a", 10.0), ("b", 5.0), ("c", 0.0)]
    hits = hybrid_rank(
        keyword,
        [],
        query="what did Zed do",
        speaker_of={"c": "Zed"},
        params=HybridParams(normalization="zscore", vector_weight=0.0, speaker_boost=0.5),
    )
    assert min(h.score for h in hits) >= 0.0
    assert [h.id for h in hits] == ["a", "b", "c"]


def test_hybrid_rank_neighbour_smoothing_brings_in_the_reply() -> None:
    params = HybridParams(vector_weight=0.0, speaker_boost=0.0, neighbour_weight=0.5)
    hits = hybrid_rank(
        [("question", 5.0), ("other", 4.0), ("far", 1.0)],
        [],
        query="q",
        neighbours={"question": ["reply"]},
        params=params,
    )
    assert [h.id for h in hits][:3] == ["question", "other", "reply"]


# -- end to end: real FTS5 table + shipped static model -------------------------

CONVERSATION = [
    # (id, speaker, session, session date, text)
    ("D1:1", "Jo", 1, date(2022, 1, 21), "Jo: Hey Nate, did your team win the tournament last weekend?"),
    ("D1:2", "Nate", 1, date(2022, 1, 21), "Nate: Yes! We took first place and I got a trophy."),
    ("D1:3", "Jo", 1, date(2022, 1, 21), "Jo: I adopted a turtle named Shelly from the pet store."),
    ("D2:1", "Nate", 2, date(2022, 6, 14), "Nate: I started writing a screenplay about a lighthouse."),
    ("D2:2", "Jo", 2, date(2022, 6, 14), "Jo: A lighthouse story sounds lovely, send me a draft."),
    ("D2:3", "Nate", 2, date(2022, 6, 14), "Nate: My turtles love the new tank I bought for them."),
]


@pytest.fixture(scope="module")
def index() -> Iterator[tuple[sqlite3.Connection, StaticEmbedder, np.ndarray]]:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(id UNINDEXED, content, context, date_text, tokenize='porter unicode61')"
    )
    previous: list[str] = []
    session = 0
    for memory_id, _, number, day, text in CONVERSATION:
        if number != session:
            previous, session = [], number
        db.execute("INSERT INTO fts VALUES (?, ?, ?, ?)", (memory_id, *index_columns(text, previous, day)))
        previous.append(text)
    embedder = StaticEmbedder()
    vectors = embedder.embed_documents([row[4] for row in CONVERSATION])
    yield db, embedder, vectors
    db.close()


def search(
    index: tuple[sqlite3.Connection, StaticEmbedder, np.ndarray], query: str, *, expanded: bool = True
) -> list[RankedHit]:
    db, embedder, vectors = index
    match = fts_query(query)
    assert match is not None
    if expanded:
        weights = ", ".join(map(str, (0.0, *KEYWORD_COLUMN_WEIGHTS)))
    else:
        match, weights = "content:" + match.partition(":")[2], "0.0, 1.0, 0.0, 0.0"
    rows = db.execute(
        f"SELECT id, -bm25(fts, {weights}) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts, {weights}) LIMIT 50",
        (match,),
    ).fetchall()
    cosine = vectors @ embedder.embed_query(query)
    vector = sorted(((row[0], float(s)) for row, s in zip(CONVERSATION, cosine, strict=True)), key=lambda x: -x[1])
    speakers = {row[0]: row[1] for row in CONVERSATION}
    return hybrid_rank(rows, vector, query=query, speaker_of=speakers)


def test_context_column_finds_the_reply_to_a_question(
    index: tuple[sqlite3.Connection, StaticEmbedder, np.ndarray],
) -> None:
    query = "Did the team win the tournament last weekend?"  # the reply D1:2 shares no word with it
    expanded = {h.id: h for h in search(index, query)}
    plain = {h.id: h for h in search(index, query, expanded=False)}
    assert list(expanded)[:2] == ["D1:1", "D1:2"]
    assert expanded["D1:2"].components["keyword"] > 0.0  # found through the question in its context
    assert plain["D1:2"].components["keyword"] == 0.0  # content alone: not a keyword hit
    assert expanded["D1:2"].score > plain["D1:2"].score


def test_date_column_answers_a_month_question(
    index: tuple[sqlite3.Connection, StaticEmbedder, np.ndarray],
) -> None:
    assert {h.id for h in search(index, "What happened in June 2022?")[:3]} == {"D2:1", "D2:2", "D2:3"}
    # naming a speaker puts that speaker's turns of the month first
    assert {h.id for h in search(index, "What was Nate doing in June 2022?")[:2]} == {"D2:1", "D2:3"}


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        pytest.param("What does Caroline paint?", {"Caroline"}, "What does paint?", id="name"),
        pytest.param("Why did MELANIE's kids laugh?", {"Melanie"}, "Why did kids laugh?", id="possessive-any-case"),
        pytest.param("When did Jon and Gina meet?", {"Jon", "Gina"}, "When did and meet?", id="two"),
        pytest.param("What did Anna Lee say to Anna?", {"Anna Lee"}, "What did say to Anna?", id="two-word-name"),
        pytest.param("Who is Jonathan?", {"Jon"}, "Who is Jonathan?", id="whole-words-only"),
        pytest.param("Caroline?", {"Caroline"}, "Caroline?", id="nothing-else-left"),
        pytest.param("What does Caroline paint?", set(), "What does Caroline paint?", id="no-names"),
    ],
)
def test_without_names(query: str, names: set[str], expected: str) -> None:
    assert without_names(query, names) == expected
