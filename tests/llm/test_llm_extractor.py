"""LLMExtractor end to end over real local protocol servers, its re-ask and its fallback."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from memstrata.errors import LLMOutputError, ProviderError
from memstrata.extraction.base import Candidate, Extractor, Message
from memstrata.extraction.llm import LLMExtractor
from memstrata.llm import ScriptedLLM
from memstrata.models import MemoryKind
from tests.llm.servers import FakeLLMServer, client_for, completion, error

SAID_AT = datetime(2021, 6, 4, 18, 45, tzinfo=UTC)  # a Friday
MESSAGES = [
    Message("user", "Hi! I'm Alice. I moved to Lisbon last week.", datetime(2021, 6, 3, 9, 0, tzinfo=UTC)),
    Message("assistant", "Welcome to Lisbon!", datetime(2021, 6, 3, 9, 1, tzinfo=UTC)),
    Message("user", "My sister Ana visits on June 12. I can't stand cilantro.", SAID_AT),
]

FACTS = {
    "facts": [
        {
            "kind": "fact",
            "category": "identity",
            "content": "Alice lives in Lisbon.",
            "subject": "alice",
            "attribute": "location",
            "value": "Lisbon",
            "polarity": 1,
            "event_date": "2021-05-27",
            "entities": [{"name": "Lisbon", "type": "place"}],
            "profile": {"category": "identity", "key": "location", "value": "Lisbon"},
            "source": 0,
            "confidence": 0.9,
        },
        {
            "kind": "event",
            "category": "event",
            "content": "Alice's sister Ana visits on 2021-06-12.",
            "subject": "user",
            "attribute": "event",
            "value": "Ana visits",
            "event_date": "2021-06-12",
            "entities": [{"name": "Ana", "type": "person"}],
            "source": 2,
        },
        {
            "kind": "preference",
            "category": "preference",
            "content": "Alice dislikes cilantro.",
            "attribute": "likes",
            "value": "cilantro",
            "polarity": -1,
            "source": 2,
        },
    ]
}
ANSWER = "<think>The user said three things worth keeping.</think>\n```json\n" + json.dumps(FACTS) + "\n```"


class EchoExtractor:
    """A small real extractor used as the fallback: each user message becomes one note."""

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        return [
            Candidate(kind=MemoryKind.NOTE, content=f"The user said: {m.content}", category="request")
            for m in messages
            if m.role == "user"
        ]


def last_user_prompt(server: FakeLLMServer, index: int = -1) -> str:
    messages = server.requests[index].json["messages"]
    content = messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(block["text"] for block in content)


def test_llm_extractor_is_an_extractor():
    assert isinstance(LLMExtractor(ScriptedLLM([])), Extractor)


def test_end_to_end_over_both_protocols(fake):
    fake.script(completion(ANSWER))
    with client_for(fake) as llm:
        extractor = LLMExtractor(llm, fallback=EchoExtractor())
        candidates = extractor.extract(MESSAGES, known_name="Alice")
    assert [c.content for c in candidates] == [
        "Alice lives in Lisbon.",
        "Alice's sister Ana visits on 2021-06-12.",
        "Alice dislikes cilantro.",
    ]
    lives, visit, cilantro = candidates
    assert (lives.kind, lives.category, lives.subject, lives.attribute, lives.value) == (
        MemoryKind.FACT,
        "identity",
        "user",  # "alice" is the known user's own name
        "location",
        "Lisbon",
    )
    assert lives.profile is not None and (lives.profile.key, lives.profile.value) == ("location", "Lisbon")
    assert [(e.name, e.type) for e in lives.entities] == [("Lisbon", "place")]
    assert lives.source_text == MESSAGES[0].content
    assert visit.event_time == datetime(2021, 6, 12, tzinfo=UTC)
    assert visit.source_text == MESSAGES[2].content
    assert (cilantro.kind, cilantro.polarity, cilantro.attribute) == (MemoryKind.PREFERENCE, -1, "likes")
    assert extractor.stats.calls == 1
    assert extractor.stats.failures == extractor.stats.fallbacks == 0
    assert llm.usage.snapshot().calls == 1


def test_prompt_is_dated_by_the_messages_not_the_wall_clock(fake):
    fake.script(completion('{"facts": []}'))
    with client_for(fake) as llm:
        assert LLMExtractor(llm).extract(MESSAGES) == []
    prompt = last_user_prompt(fake)
    assert "Today is 2021-06-04 (Friday)." in prompt
    assert "2021-06-03 (Thursday) user: Hi! I'm Alice." in prompt
    assert datetime.now(UTC).date().isoformat() not in prompt


def test_json_mode_is_requested(fake):
    fake.script(completion('{"facts": []}'))
    with client_for(fake) as llm:
        LLMExtractor(llm).extract(MESSAGES)
    body = fake.requests[0].json
    if fake.protocol == "openai":
        assert body["response_format"] == {"type": "json_object"}
    else:
        assert "Respond with a single valid JSON value" in body["system"]


def test_broken_json_gets_one_reask(fake):
    fake.script(completion('{"facts": [{"category": "identity", "content": "x"'), completion(ANSWER))
    with client_for(fake) as llm:
        extractor = LLMExtractor(llm, fallback=EchoExtractor())
        candidates = extractor.extract(MESSAGES)
    assert len(candidates) == 3
    assert len(fake.requests) == 2
    retry = last_user_prompt(fake, 1)
    assert "could not be used" in retry
    assert "never closes" in retry
    assert extractor.stats.reasks == 1
    assert extractor.stats.fallbacks == 0


def test_truncated_answer_is_reasked_with_a_bigger_budget(openai_fake):
    openai_fake.script(completion('{"facts": [{"kind": "fact",', finish_reason="length"), completion(ANSWER))
    with client_for(openai_fake) as llm:
        LLMExtractor(llm, max_tokens=300).extract(MESSAGES)
    assert [request.json["max_tokens"] for request in openai_fake.requests] == [300, 600]


def test_unusable_twice_falls_back_and_counts(fake):
    fake.script(completion("I'd rather not answer in JSON."), completion("<think>still no</think> Sorry."))
    with client_for(fake) as llm:
        extractor = LLMExtractor(llm, fallback=EchoExtractor())
        candidates = extractor.extract(MESSAGES)
    assert [c.content for c in candidates] == [f"The user said: {m.content}" for m in MESSAGES if m.role == "user"]
    stats = extractor.stats
    assert (stats.reasks, stats.output_failures, stats.provider_failures, stats.fallbacks) == (1, 1, 0, 1)


def test_provider_failure_falls_back_and_counts(fake):
    fake.script(*[error(503, "overloaded") for _ in range(3)])
    with client_for(fake, max_retries=2) as llm:
        extractor = LLMExtractor(llm, fallback=EchoExtractor())
        candidates = extractor.extract(MESSAGES)
    assert len(candidates) == 2
    assert (extractor.stats.provider_failures, extractor.stats.fallbacks) == (1, 1)
    assert llm.usage.snapshot().failures == 1


def test_without_fallback_the_error_is_raised(fake):
    fake.script(completion("no json"), completion("still no json"))
    with client_for(fake) as llm:
        extractor = LLMExtractor(llm)
        with pytest.raises(LLMOutputError, match="no JSON"):
            extractor.extract(MESSAGES)
        with pytest.raises(ProviderError):
            extractor.extract(MESSAGES)  # script exhausted: HTTP 500 until retries run out
    assert (extractor.stats.output_failures, extractor.stats.provider_failures) == (1, 1)


def test_invalid_and_duplicate_facts_are_dropped_and_counted():
    answer = {
        "facts": [
            {"category": "preference", "kind": "preference", "content": "The user likes tea."},
            {"category": "preference", "kind": "preference", "content": "the user likes tea."},
            {"category": "gossip", "content": "Not a known category."},
            {"category": "event", "content": ""},
            "a bare string is not a fact",
        ]
    }
    extractor = LLMExtractor(ScriptedLLM([json.dumps(answer)]))
    candidates = extractor.extract(MESSAGES)
    assert [c.content for c in candidates] == ["The user likes tea."]
    assert extractor.stats.rejected_facts == 3


def test_sloppy_fields_are_normalized_not_rejected():
    answer = {
        "facts": [
            {
                "kind": "summary",
                "category": "open_item",
                "content": "The user wants to renew the passport.",
                "event_date": "next week",
                "source": "message 2",
                "confidence": 7,
            }
        ]
    }
    [candidate] = LLMExtractor(ScriptedLLM([json.dumps(answer)])).extract(MESSAGES)
    assert candidate.kind == MemoryKind.TASK, "an unknown kind is derived from the category"
    assert candidate.event_time is None
    assert candidate.source_text == MESSAGES[2].content
    assert candidate.confidence == 1.0


def test_no_messages_means_no_call():
    llm = ScriptedLLM([])
    assert LLMExtractor(llm).extract([]) == []
    assert llm.calls == []
