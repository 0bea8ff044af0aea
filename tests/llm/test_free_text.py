"""The pure check of free-text answers stored as memory: preamble and chatter removed, unusable text refused."""

from __future__ import annotations

import pytest

from memstrata.errors import LLMOutputError
from memstrata.prompts import parse_consolidation, parse_summary
from memstrata.prompts.free_text import is_chatter, usable_text

SOURCES = [
    "2024-05-11 (Saturday) user (Alice): I moved to Porto with Sarah.",
    "user (Alice): I work at ACME as a nurse.",
]
BODY = "Alice moved to Porto with Sarah on 2024-05-11. She works at ACME as a nurse."


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(BODY, id="plain"),
        pytest.param(f"Sure! Here is the updated summary: {BODY}", id="interjection-and-introduction"),
        pytest.param(f"Here's a summary of the conversation:\n\n{BODY}", id="introducing-line"),
        pytest.param(f"**Updated summary:** {BODY}", id="label"),
        pytest.param(f"{BODY} Let me know if you'd like any changes!", id="offer"),
        pytest.param(f"{BODY}\n\nI hope this helps! Would you like me to make it shorter?", id="hope-and-question"),
        pytest.param(f"{BODY}\n\n---\nFeel free to ask if anything is missing.", id="separator-and-offer"),
        pytest.param(f"{BODY} Is there anything else you want me to add?", id="question-to-the-reader"),
        pytest.param(f"Certainly. {BODY} Anything else?", id="bare-closing-question"),
        pytest.param(f"<think>the user wants…</think>\n```\n{BODY}\n```\nHope this helps.", id="reasoning-fence"),
        pytest.param(f"Okay, here is the summary: {BODY} I can also shorten it if you prefer.", id="offer-to-shorten"),
        pytest.param(f"Sure! {BODY} Let me know if you’d like changes.", id="curly-apostrophe"),
    ],
)
def test_preamble_and_chatter_are_removed(raw: str) -> None:
    assert usable_text(raw, sources=SOURCES) == BODY


@pytest.mark.parametrize(
    "sentence",
    [
        "The user asked whether anything else was needed for the trip.",  # third person: part of a summary
        "Open question: will Sarah approve the budget?",  # a question, but not to the reader
        "The user says they hope this helps their sister.",
    ],
)
def test_summary_sentences_are_not_chatter(sentence: str) -> None:
    assert not is_chatter(sentence)
    assert usable_text(f"Alice moved to Porto. {sentence}") == f"Alice moved to Porto. {sentence}"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param("I can't help with that.", "declines", id="cannot"),
        pytest.param("I’m sorry, but I am unable to summarize this conversation.", "declines", id="sorry-unable"),
        pytest.param("As an AI, I do not have access to the previous turns.", "declines", id="as-an-ai"),
        pytest.param("Let me know if you need anything else!", "nothing is left", id="only-chatter"),
        pytest.param("Here is the summary:", "no content words", id="only-preamble"),
        pytest.param(
            "The weather on Mars is cold, with dust storms lasting months.", "not look like a summary", id="off-input"
        ),
    ],
)
def test_unusable_answers_are_refused(raw: str, reason: str) -> None:
    with pytest.raises(LLMOutputError, match=reason):
        usable_text(raw, sources=SOURCES)


def test_a_paraphrase_sharing_a_fifth_of_its_words_with_the_inputs_is_kept() -> None:
    # 5 content words (relocat, porto, compani, sarah, spring); porto and sarah occur in the inputs: 2/5
    assert usable_text("Relocated to Porto in company of Sarah last spring.", sources=SOURCES)
    with pytest.raises(LLMOutputError, match="only 1 of its 6"):
        usable_text("Relocated to Lisbon in company of Sarah last spring.", sources=SOURCES)


def test_summary_and_compressed_memory_parsers_use_the_check() -> None:
    assert parse_summary(f"Here is the summary: {BODY} Let me know!", sources=SOURCES) == BODY
    assert (
        parse_consolidation(
            f"Here is the compressed memory:\n[Compressed memory] {BODY}\n\nI hope this helps!", sources=SOURCES
        )
        == f"[Compressed memory] {BODY}"
    )
    with pytest.raises(LLMOutputError, match="compressed memory is not usable"):
        parse_consolidation("[Compressed memory] I cannot compress these memories.", sources=SOURCES)
