"""Pure logic: budget packing, the token counter, the extractive summarizer and salient terms."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memstrata.buffer import Turn
from memstrata.core.budget import Block, pack
from memstrata.core.summarize import salience, salient_terms, split_sentences, summarize_extractive
from memstrata.core.tokens import HFTokenCounter, count_tokens, default_counter
from memstrata.errors import InvalidInput

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def count_many(texts: list[str] | tuple[str, ...]) -> list[int]:
    return default_counter().count_many(list(texts))


# -- tokens ------------------------------------------------------------------------------------
def test_the_counter_is_the_shipped_wordpiece_tokenizer() -> None:
    # bert-base-uncased WordPiece: hello , world ! 202 ##3 - 05 - 08
    assert count_tokens("Hello, World! 2023-05-08") == 10
    counter = HFTokenCounter()
    assert counter.count("") == 0
    assert counter.count("unbelievable") == len(counter._load().encode("unbelievable", add_special_tokens=False).ids)
    long_text = "word " * 2000
    assert counter.count(long_text) == 2000  # no 512-token truncation
    assert counter.count_many(["a b", "a b", "c"]) == [2, 2, 1]
    assert counter.count("a b\n\nc d") == counter.count("a b") + counter.count("c d")  # joins add nothing


# -- packing -----------------------------------------------------------------------------------
def blocks() -> list[Block]:
    return [
        Block("profile", "What I know about this user:", ["- name: Alice", "- city: Lisbon"]),
        Block(
            "memories",
            "Relevant memories:",
            [f"- memory number {i} about hiking" for i in range(10)],
            empty="None.",
        ),
        Block(
            "recent",
            "Recent conversation:",
            [f"user: turn {i}" for i in range(6)],
            keep="last",
            contiguous=True,
        ),
    ]


@pytest.mark.parametrize("budget", [1, 5, 9, 12, 20, 33, 50, 77, 100, 150, 1000])
def test_packing_never_exceeds_the_budget(budget: int) -> None:
    packed = pack(blocks(), budget, count_many)
    assert packed.tokens <= budget
    assert packed.tokens == count_tokens(packed.text)
    assert sum(p.tokens for p in packed.parts) == packed.tokens
    assert [p.name for p in packed.parts] + list(packed.dropped) != []


def test_a_big_budget_keeps_everything_in_display_order() -> None:
    packed = pack(blocks(), 1000, count_many)
    assert [p.name for p in packed.parts] == ["profile", "memories", "recent"] and packed.dropped == ()
    assert packed.text.startswith("What I know about this user:\n- name: Alice\n- city: Lisbon\n\nRelevant memories:")
    assert packed.text.endswith("user: turn 4\nuser: turn 5")


def test_lower_priority_parts_lose_items_then_disappear_first() -> None:
    full = pack(blocks(), 1000, count_many)
    sizes = {p.name: p.tokens for p in full.parts}
    budget = sizes["profile"] + sizes["memories"] + 12  # the recent part must shrink to its newest turns
    packed = pack(blocks(), budget, count_many)
    recent = next(p for p in packed.parts if p.name == "recent")
    assert next(p for p in packed.parts if p.name == "memories").items == 10
    assert 0 < recent.items < 6 and recent.text.endswith("user: turn 5")
    assert "turn 0" not in recent.text  # contiguous: the newest turns are kept
    tight = pack(blocks(), sizes["profile"] + 10, count_many)
    assert [p.name for p in tight.parts] == ["profile", "memories"] and tight.dropped == ("recent",)
    assert next(p for p in tight.parts if p.name == "memories").items < 10
    assert "memory number 0" in tight.text  # first items have priority
    smallest = pack(blocks(), 3, count_many)
    assert smallest.parts == () and smallest.dropped == ("profile", "memories", "recent")


def test_display_order_and_empty_text_and_inline_blocks() -> None:
    items = ["- second (most relevant)", "- first", "- third"]
    block = Block("m", "Memories:", items, order=[2.0, 1.0, 3.0])
    assert pack([block], 100, count_many).text == "Memories:\n- first\n- second (most relevant)\n- third"
    assert (
        pack([Block("m", "Memories:", [], empty="Nothing found.")], 100, count_many).text == "Memories:\nNothing found."
    )
    inline = Block("topics", "Last talked about:", ["hiking", "Lisbon"], inline=True, separator=", ")
    assert pack([inline], 100, count_many).text == "Last talked about: hiking, Lisbon"
    assert pack([Block("x", "Header:", [])], 100, count_many).parts == ()


def test_truncation_keeps_a_cut_first_item_instead_of_nothing() -> None:
    long_turn = "user: " + " ".join(f"word{i}" for i in range(200))
    block = Block(
        "recent",
        "Recent conversation:",
        ["user: short", long_turn],
        keep="last",
        contiguous=True,
        truncate=True,
    )
    packed = pack([block], 40, count_many)
    assert packed.tokens <= 40 and packed.text.endswith("…") and "word0" in packed.text
    assert "short" not in packed.text


def test_packing_is_deterministic_and_validates() -> None:
    assert pack(blocks(), 60, count_many) == pack(blocks(), 60, count_many)
    with pytest.raises(InvalidInput):
        pack(blocks(), 0, count_many)
    with pytest.raises(InvalidInput, match="unique"):
        pack([Block("a"), Block("a")], 10, count_many)
    with pytest.raises(InvalidInput, match="order"):
        Block("a", items=["x"], order=[1.0, 2.0])


TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),  # any character: accents, combining marks, CJK, controls, punctuation
        st.sampled_from(" \n\t-:;,.'[]#é\u0301\u4e2d"),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=4), separator=st.sampled_from([" ", "\n", "\n\n", "; ", ", "]))
@example(texts=["naïve café", "\u0301accent first", "[SEP", "] 中文"], separator="\n")
def test_the_shipped_counter_adds_up_over_whitespace_and_punctuation_joins(texts: list[str], separator: str) -> None:
    counter = default_counter()
    assert counter.additive
    joined = counter.count(separator.join(texts))
    assert joined == sum(counter.count_many(texts)) + counter.count(separator) * (len(texts) - 1)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.lists(TEXT, max_size=6), min_size=1, max_size=4),
    separator=st.sampled_from(["\n", "; ", ", ", " / "]),
    budget=st.integers(min_value=1, max_value=120),
)
def test_packing_by_adding_counts_up_is_packing_by_counting_again(
    items: list[list[str]], separator: str, budget: int
) -> None:
    """The additive counter's shortcut (`pack(..., additive=True)`) gives the same packing, text and counts."""
    blocks = [
        Block(
            f"b{i}", header="Header:" if i % 2 else "", items=texts, separator=separator, inline=i == 1, truncate=True
        )
        for i, texts in enumerate(items)
    ]
    assert pack(blocks, budget, count_many, additive=True) == pack(blocks, budget, count_many)


def test_a_counter_of_another_kind_is_not_additive(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel()
    path = tmp_path / "bpe.json"
    bpe.save(str(path))
    assert not HFTokenCounter(path).additive and HFTokenCounter().additive


# -- summaries ---------------------------------------------------------------------------------
def turn(role: str, text: str, speaker: str | None = None) -> Turn:
    return Turn(role, text, AT, speaker=speaker)


CHAT = [
    turn("user", "Hi there!"),
    turn("assistant", "Hello! How can I help you today?"),
    turn(
        "user",
        "My manager Sarah wants the Q3 report by Friday. I also need a flight to Lisbon on June 3.",
        "Alice",
    ),
    turn("assistant", "Sure. Do you want a template?"),
    turn("user", "Yes please. Also I prefer short answers."),
    turn("assistant", "Got it."),
    turn("user", "Thanks!"),
    turn("user", "My daughter Emma turns 7 next Tuesday, remind me to buy a cake."),
]


def test_extractive_summary_keeps_salient_sentences_with_speaker_and_date() -> None:
    summary = summarize_extractive(None, CHAT)
    lines = summary.splitlines()
    assert "Alice (2026-03-02): My manager Sarah wants the Q3 report by Friday." in lines
    assert "Alice (2026-03-02): I also need a flight to Lisbon on June 3." in lines
    assert "User (2026-03-02): Also I prefer short answers." in lines
    assert "User (2026-03-02): My daughter Emma turns 7 next Tuesday, remind me to buy a cake." in lines
    assert "Thanks" not in summary and "Hi there" not in summary and "Got it" not in summary
    assert summarize_extractive(None, CHAT) == summary  # deterministic


def test_rolling_summary_includes_the_previous_one_and_stays_bounded() -> None:
    summary = summarize_extractive(None, CHAT)
    for day in range(1, 30):
        newer = [turn("user", f"On March {day} I ran {day * 2} km along the river with Marco in Porto.")]
        summary = summarize_extractive(summary, newer, max_chars=600, max_lines=6)
        assert len(summary) <= 600 and len(summary.splitlines()) <= 6
    assert "March 29" in summary
    second = summarize_extractive("The user is Alice, who works at ACME since 2019.", [turn("user", "ok")])
    assert "ACME" in second and "2019" in second


def test_sentences_and_salience() -> None:
    assert split_sentences("Dr. Smith came at 5 p.m. today. Then he left! Why?\nNew line") == [
        "Dr. Smith came at 5 p.m. today.",
        "Then he left!",
        "Why?",
        "New line",
    ]
    assert salience("Thanks!") == 0.0
    assert salience("I moved to Berlin in 2021 with my partner Jonas.") > salience("That sounds fun.")


def test_salient_terms_are_topics_not_filler() -> None:
    texts = [
        "I need help with my Kubernetes cluster, the ingress keeps failing.",
        "Kubernetes ingress again: the TLS certificate expired.",
        "Thanks, that sounds great! I think the certificate is fixed.",
    ]
    assert salient_terms(texts, 3) == ["Kubernetes", "ingress", "certificate"]
    assert "Kubernetes" not in salient_terms(texts, 3, exclude=["kubernetes"])
