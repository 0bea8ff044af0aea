"""PII redaction: detection on realistic text, placeholders and restore, and the wrappers in front of real
HTTP endpoints (what crosses the wire has no PII; what is stored locally is never altered)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from memstrata import InvalidInput, MemoryKind, NewMemory
from memstrata.core.redact import PIIKind, find_pii, iban_valid, luhn_valid, redact
from memstrata.embedders.openai_compat import OpenAICompatibleEmbedder
from memstrata.llm import ChatMessage, OpenAICompatibleLLM
from memstrata.redacting import RedactingEmbedder, RedactingLLM, redacting
from tests.embedders.embeddings_server import embeddings_server
from tests.lifecycle.conftest import T0, use_policy
from tests.llm.servers import API_KEY, completion, openai_server

EMAIL = "dana.kowalski+work@mail.example.co.uk"
PHONE = "+44 20 7946 0958"
CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
PII_VALUES = [EMAIL, PHONE, CARD, IBAN, "192.168.1.20", "123-45-6789"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            f"Hi, it's Dana - reach me at {EMAIL} or call {PHONE} after 6pm.",
            "Hi, it's Dana - reach me at [EMAIL_1] or call [PHONE_1] after 6pm.",
            id="email-and-phone",
        ),
        pytest.param(
            f"My Visa is {CARD}, expiry 04/27. The old one 4111 1111 1111 1112 was cancelled.",
            "My Visa is [CARD_1], expiry 04/27. The old one 4111 1111 1111 1112 was cancelled.",
            id="card-luhn-checked",
        ),
        pytest.param(
            f"Refund to {IBAN} please, not to DE89 3704 0044 0532 0130 01.",
            "Refund to [IBAN_1] please, not to DE89 3704 0044 0532 0130 01.",
            id="iban-checksum",
        ),
        pytest.param("Wire it to GB82WEST12345698765432 today.", "Wire it to [IBAN_1] today.", id="iban-compact"),
        pytest.param(
            "The NAS is on 192.168.1.20 and the router on fe80::1ff:fe23:4567:890a.",
            "The NAS is on [IP_1] and the router on [IP_2].",
            id="ipv4-ipv6",
        ),
        pytest.param(
            "Call (555) 123-4567 or 555-987-6543; my office is 030 1234567.",
            "Call [PHONE_1] or [PHONE_2]; my office is [PHONE_3].",
            id="national-phones",
        ),
        pytest.param(
            "Mobile number 015112345678, SSN 123-45-6789.",
            "Mobile number [PHONE_1], SSN [SSN_1].",
            id="bare-digits-after-a-phone-word",
        ),
        pytest.param(
            "Use key sk-proj-abcdefghijklmnopqrstuvwxyz123456 with AKIAIOSFODNN7EXAMPLE.",
            "Use key [SECRET_1] with [SECRET_2].",
            id="api-keys",
        ),
        pytest.param(
            "Mail a@b.io, then A@B.io again.",
            "Mail [EMAIL_1], then [EMAIL_1] again.",
            id="same-value-same-placeholder",
        ),
    ],
)
def test_realistic_samples(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.restore(result.text) == text.replace("A@B.io", "a@b.io")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("We met on 2024-03-02 at 14:05:30 and again on 12.03.2024.", id="dates-and-times"),
        pytest.param("Version 1.2.3 of the app; build 20240302.", id="versions"),
        pytest.param("I ran 10 20 30 40 50 km and paid 1200 2300 4500 dollars in 2019.", id="number-lists"),
        pytest.param("ISBN 978-3-16-148410-0, order 2024-05-11, flight LH400.", id="codes"),
        pytest.param("Invoice 4111 1111 1111 1112 is not a valid card number.", id="luhn-fails"),
        pytest.param("I earn 120000 a year and have 3 kids.", id="amounts"),
    ],
)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    assert find_pii(text) == []
    assert redact(text).text == text


def test_checksums_and_kind_selection() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("DE89370400440532013000") and not iban_valid("DE89370400440532013001")
    text = f"{EMAIL} / {PHONE}"
    assert redact(text, kinds=PIIKind.parse_many(["email"])).text == f"[EMAIL_1] / {PHONE}"
    assert redact([text, f"again {EMAIL}"]).texts == ("[EMAIL_1] / [PHONE_1]", "again [EMAIL_1]")
    assert redact(text).counts == {"email": 1, "phone": 1}
    with pytest.raises(InvalidInput, match="unknown PII kind 'names'"):
        PIIKind.parse_many(["names"])


def test_redacting_llm_sends_no_pii_over_http_and_restores_the_answer() -> None:
    with openai_server(api_key=API_KEY) as server:
        server.script(completion('{"facts": [{"text": "Dana\'s email is [EMAIL_1] and card [CARD_1]"}]}'))
        llm = RedactingLLM(OpenAICompatibleLLM(server.base_url, "fake-model", API_KEY, max_retries=0))
        response = llm.complete(
            [
                ChatMessage("system", "Extract facts."),
                ChatMessage("user", f"My email is {EMAIL}, card {CARD}."),
            ]
        )
        llm.close()
        wire = server.requests[0].raw.decode()
    assert not any(value in wire for value in PII_VALUES) and "[EMAIL_1]" in wire and "[CARD_1]" in wire
    assert response.text == f'{{"facts": [{{"text": "Dana\'s email is {EMAIL} and card {CARD}"}}]}}'
    assert llm.usage is llm.inner.usage and llm.usage.calls == 1  # type: ignore[attr-defined]


def test_redacting_embedder_sends_no_pii_and_stored_text_is_unchanged(
    make_memory: Callable[..., Any],
) -> None:
    texts = [f"Dana's email is {EMAIL}", f"Pay to {IBAN} from card {CARD}", "Dana lives in Porto"]
    with embeddings_server(dimensions=16, api_key="k") as server:
        remote = OpenAICompatibleEmbedder(server.base_url, "fake-embed", api_key="k", dimensions=16, timeout=5.0)
        with remote:
            memory = make_memory("redact", embedder=RedactingEmbedder(remote))
            records = memory.add_many([NewMemory(t) for t in texts], scope="dana")
            hits = memory.search(f"what is {EMAIL}?", scope="dana", k=1, strategy="semantic")
        wire = " ".join(str(r.json) for r in server.requests)
    assert not any(value in wire for value in PII_VALUES)
    assert "[EMAIL_1]" in wire and "[IBAN_1]" in wire
    assert [memory.get(r.id, scope="dana").content for r in records] == texts
    assert hits[0].memory.content == texts[0]
    with sqlite3.connect(memory.store.path) as raw:
        stored = [row[0] for row in raw.execute("SELECT content FROM memories ORDER BY created_at, rowid")]
    assert stored == texts
    assert memory.embedder.name == remote.name and memory.embedder.dimensions == 16


def test_consolidation_through_a_redacting_llm_keeps_originals_local(memory: Any) -> None:
    memory.add_many(
        [
            NewMemory(
                f"Dana called from {PHONE} about trip {i}",
                kind=MemoryKind.EVENT,
                created_at=T0 - timedelta(days=40, hours=i),
            )
            for i in range(10)
        ],
        scope="dana",
    )
    with openai_server(api_key=API_KEY) as server:
        server.script(completion("[Compressed memory] Dana called ten times from [PHONE_1] about trips."))
        inner = OpenAICompatibleLLM(server.base_url, "fake-model", API_KEY, max_retries=0)
        memory = use_policy(memory, llm=RedactingLLM(inner))
        report = memory.consolidate(scope="dana")
        inner.close()
        wire = server.requests[0].raw.decode()
    assert PHONE not in wire and "[PHONE_1]" in wire
    summary = memory.get(report.summaries[0], scope="dana")
    assert summary.content.endswith(f"Dana called ten times from {PHONE} about trips.")


def test_redacting_helper_wraps_once() -> None:
    from memstrata.embedders.hashing import HashingEmbedder
    from memstrata.llm.scripted import ScriptedLLM

    embedder, llm = redacting(HashingEmbedder(8), ScriptedLLM(["ok"]))
    assert isinstance(embedder, RedactingEmbedder) and isinstance(llm, RedactingLLM)
    assert redacting(embedder, llm) == (embedder, llm)
    plain, none = redacting(HashingEmbedder(8), None, embeddings=False)
    assert not isinstance(plain, RedactingEmbedder) and none is None
