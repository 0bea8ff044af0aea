"""Personal data is scrubbed by default whenever text leaves the machine, and checksummed patterns
survive adversarial spacing (issue 15 finding 11)."""

from __future__ import annotations

import pytest

from memstrata.core.redact import redact
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.embedders.openai_compat import OpenAICompatibleEmbedder
from memstrata.llm import AnthropicLLM, OpenAICompatibleLLM
from memstrata.memory import Memory
from memstrata.redacting import RedactingEmbedder, RedactingLLM, leaves_machine, should_redact
from memstrata.settings import Settings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4111 1111 1111 1111 12 dollars", "[CARD_1] 12 dollars"),
        ("card 4111111111111111 2 times", "card [CARD_1] 2 times"),
        ("4111  1111-1111 1111", "[CARD_1]"),
        ("4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "[CARD_1]"),
        ("5500 0000 0000 0004 4111 1111 1111 1111", "[CARD_1] [CARD_2]"),
        ("GB82 WEST 1234 5698 7654 32 DE89 3704 0044 0532 0130 00", "[IBAN_1] [IBAN_2]"),
        ("GB82WEST12345698765432 DE89370400440532013000", "[IBAN_1] [IBAN_2]"),
        ("GB82  WEST  1234  5698  7654  32.", "[IBAN_1]."),
        ("order 4111 1111 1111 1112 is not a card", "order 4111 1111 1111 1112 is not a card"),
        ("on 2024-01-01 I paid 12 34 56 euros", "on 2024-01-01 I paid 12 34 56 euros"),
    ],
)
def test_checksummed_patterns_survive_adversarial_spacing(text: str, expected: str) -> None:
    assert redact(text).text == expected


def test_remote_clients_leave_the_machine_local_ones_do_not() -> None:
    assert leaves_machine(OpenAICompatibleLLM("https://api.openai.com/v1", "gpt", "sk-x"))
    assert leaves_machine(AnthropicLLM("claude", "key"))
    assert leaves_machine(OpenAICompatibleEmbedder("https://api.example.com/v1", "emb", dimensions=8))
    assert not leaves_machine(OpenAICompatibleLLM("http://127.0.0.1:11434/v1", "llama"))
    assert not leaves_machine(OpenAICompatibleLLM("http://localhost:11434/v1", "llama"))
    assert not leaves_machine(OpenAICompatibleEmbedder("http://[::1]:8080/v1", "emb", dimensions=8))
    assert not leaves_machine(HashingEmbedder(8))
    assert should_redact(False, AnthropicLLM("claude", "key")) is False
    assert should_redact(True, HashingEmbedder(8)) is True


def test_memory_redacts_by_default_for_a_remote_llm_and_embedder(tmp_path: object) -> None:
    remote_llm = OpenAICompatibleLLM("https://api.openai.com/v1", "gpt", "sk-x")
    remote_embedder = OpenAICompatibleEmbedder("https://api.example.com/v1", "emb", dimensions=8)
    memory = Memory(store=":memory:", embedder=remote_embedder, llm=remote_llm, settings=Settings())
    try:
        assert isinstance(memory.embedder, RedactingEmbedder) and isinstance(memory.llm, RedactingLLM)
    finally:
        memory.close()
    local = Memory(store=":memory:", embedder=HashingEmbedder(8), llm=OpenAICompatibleLLM("http://127.0.0.1:9/v1", "m"))
    try:
        assert not isinstance(local.llm, RedactingLLM)
    finally:
        local.close()
    off = Memory(store=":memory:", embedder=HashingEmbedder(8), llm=remote_llm, settings=Settings(redact_pii=False))
    try:
        assert not isinstance(off.llm, RedactingLLM)
    finally:
        off.close()
