"""Fixtures for the benchmark harness tests: a tiny LoCoMo-format file written on the fly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

TOPICS = [
    ("Ana", "I adopted a grey kitten called Pixel last week."),
    ("Ben", "That's lovely! I started learning the cello in March."),
    ("Ana", "My sister Clara moved to Lisbon for a new job at a bakery."),
    ("Ben", "I ran the Berlin marathon in three hours and forty minutes."),
    ("Ana", "We are planning a camping trip to the Pyrenees in August."),
    ("Ben", "My favourite food is spicy ramen from the place near the station."),
]


def conversation(sample_id: str, offset: int) -> dict[str, Any]:
    turns = [
        {"speaker": speaker, "dia_id": f"D1:{i + 1}", "text": text}
        for i, (speaker, text) in enumerate(TOPICS[offset:] + TOPICS[:offset])
    ]
    by_text = {t["text"]: t["dia_id"] for t in turns}
    qa = [
        {
            "question": "What is the name of Ana's kitten?",
            "answer": "Pixel",
            "category": 4,
            "evidence": [by_text[TOPICS[0][1]]],
        },
        {
            "question": "Where did Clara move for her bakery job?",
            "answer": "Lisbon",
            "category": 1,
            "evidence": [by_text[TOPICS[2][1]]],
        },
        {
            "question": "Which marathon did Ben run?",
            "answer": "Berlin",
            "category": 2,
            "evidence": [by_text[TOPICS[3][1]]],
        },
        {
            "question": "What does Ben like to eat?",
            "answer": "ramen",
            "category": 3,
            "evidence": [by_text[TOPICS[5][1]]],
        },
        {"question": "Ignored adversarial question", "answer": "", "category": 5, "evidence": ["D1:1"]},
    ]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": qa,
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([conversation("conv-a", 0), conversation("conv-b", 2)]), encoding="utf-8")
    return path
