"""The LoCoMo context benchmark on a small conversation in locomo10.json format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memstrata_bench.locomo import ingest
from memstrata_bench.locomo_context import context_recall, evaluate_context, full_context_tokens
from memstrata_bench.locomo_data import parse_conversation

from memstrata import Memory, Settings
from memstrata.core.tokens import default_counter

SAMPLE = {
    "sample_id": "tiny",
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a LGBTQ support group yesterday."},
            {
                "speaker": "Melanie",
                "dia_id": "D1:2",
                "text": "That's great! I painted a lake sunrise last year.",
            },
            {
                "speaker": "Caroline",
                "dia_id": "D1:3",
                "text": "I want to study counseling and mental health.",
            },
        ],
        "session_2_date_time": "1:14 pm on 25 May, 2023",
        "session_2": [
            {
                "speaker": "Melanie",
                "dia_id": "D2:1",
                "text": "I ran a charity race for mental health last Saturday.",
            },
            {
                "speaker": "Caroline",
                "dia_id": "D2:2",
                "text": "Nice! My friends gave me a necklace from Sweden.",
            },
        ]
        + [
            {
                "speaker": "Melanie",
                "dia_id": f"D2:{i}",
                "text": f"Filler remark number {i} about the weather.",
            }
            for i in range(3, 40)
        ],
    },
    "qa": [
        {"question": "When did Caroline go to the LGBTQ support group?", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Melanie paint?", "evidence": ["D1:2"], "category": 1},
        {
            "question": "Where is Caroline's necklace from, and what race did Melanie run?",
            "evidence": ["D2:2", "D2:1"],
            "category": 4,
        },
    ],
}


def test_context_recall_is_verbatim_containment() -> None:
    documents = {"D1:1": "Caroline: I went  to a group.", "D1:2": "Melanie: Hi."}
    assert context_recall(["D1:1", "D1:2"], documents, "- [8 May 2023] Caroline: I went to a group.") == 0.5
    assert context_recall([], documents, "anything") == 0.0


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(store=f"sqlite:///{tmp_path / 'memories.db'}", embedder="hashing:64", settings=Settings(llm=None))
    yield memory
    memory.close()


def test_evaluate_context_on_an_ingested_conversation(memory: Any) -> None:
    conversation = parse_conversation(SAMPLE)
    ingest(memory, conversation)
    result = evaluate_context(memory, [conversation], budgets=(40, 1000))
    assert result["questions"] == 3
    full = full_context_tokens(conversation, default_counter())
    assert result["full_context_tokens_mean"] == full > 400
    assert 0 < result["context_tokens_mean@40"] <= 40
    assert result["context_recall@1000"] == 1.0  # everything relevant fits in 1000 tokens
    assert result["context_recall@40"] < result["context_recall@1000"]
    assert result["context_fraction@1000"] == pytest.approx(result["context_tokens_mean@1000"] / full, abs=1e-3)
    assert result["context_tokens_mean"] == result["context_tokens_mean@1000"]
    assert set(result["context_recall_by_category@1000"]) == {"1", "2", "3", "4"}
    assert result["context_ms_p50"] > 0
