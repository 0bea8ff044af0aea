"""Retries, backoff, Retry-After and timeouts, against real local servers (small delays)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from memstrata.errors import InvalidInput, ProviderError
from memstrata.llm import ChatMessage, OpenAICompatibleLLM
from memstrata.llm._http import RetryPolicy, backoff_delay, next_delay, retry_after_seconds, safe_url
from tests.llm.servers import API_KEY, client_for, closed_port_url, completion, error, slow

PROMPT = [ChatMessage("user", "hello")]


def gaps(server) -> list[float]:
    times = [request.received_at for request in server.requests]
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def test_429_with_retry_after_seconds_then_success(fake):
    fake.script(error(429, "rate limited", headers={"Retry-After": "1"}), completion("done"))
    with client_for(fake, backoff=0.001) as llm:
        assert llm.complete(PROMPT).text == "done"
        assert llm.usage.snapshot().calls == 1
    assert len(fake.requests) == 2
    assert gaps(fake)[0] >= 0.95, "the client waited as long as Retry-After asked"


def test_retry_after_ms_is_honored(openai_fake):
    openai_fake.script(error(429, "slow down", headers={"retry-after-ms": "300"}), completion("done"))
    with client_for(openai_fake, backoff=0.001) as llm:
        assert llm.complete(PROMPT).text == "done"
    assert 0.28 <= gaps(openai_fake)[0] < 0.9


def test_retry_after_is_capped_by_max_delay(openai_fake):
    openai_fake.script(error(503, "busy", headers={"Retry-After": "30"}), completion("done"))
    with client_for(openai_fake, max_delay=0.2) as llm:
        started = time.monotonic()
        assert llm.complete(PROMPT).text == "done"
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529, 408, 429])
def test_transient_statuses_are_retried(fake, status):
    fake.script(error(status, "transient"), error(status, "transient"), completion("recovered"))
    with client_for(fake) as llm:
        assert llm.complete(PROMPT).text == "recovered"
    assert len(fake.requests) == 3


def test_500s_until_exhaustion_raise_provider_error_naming_the_url(fake):
    fake.script(*[error(500, "boom") for _ in range(10)])
    with client_for(fake, max_retries=2) as llm, pytest.raises(ProviderError) as caught:
        llm.complete(PROMPT)
    message = str(caught.value)
    assert fake.url in message
    assert "after 3 attempt(s)" in message
    assert "HTTP 500" in message
    assert API_KEY not in message
    assert len(fake.requests) == 3
    assert llm.usage.snapshot().failures == 1
    assert llm.usage.snapshot().calls == 0


def test_backoff_grows_between_attempts(openai_fake):
    openai_fake.script(*[error(500, "boom") for _ in range(4)])
    with (
        client_for(openai_fake, max_retries=3, backoff=0.1, max_delay=5.0) as llm,
        pytest.raises(ProviderError),
    ):
        llm.complete(PROMPT)
    waits = gaps(openai_fake)
    # equal jitter: attempt n waits between 0.5 and 1.0 of 0.1 * 2**n seconds
    assert 0.05 <= waits[0] < 0.1 + 0.25
    assert 0.1 <= waits[1] < 0.2 + 0.25
    assert 0.2 <= waits[2] < 0.4 + 0.25


def test_zero_retries_means_one_attempt(fake):
    fake.script(error(503, "busy"), completion("never"))
    with client_for(fake, max_retries=0) as llm, pytest.raises(ProviderError, match="after 1 attempt"):
        llm.complete(PROMPT)
    assert len(fake.requests) == 1


def test_slow_response_times_out_and_is_retried(fake):
    fake.script(slow("too late", delay=2.0), completion("in time"))
    with client_for(fake, timeout=0.3) as llm:
        started = time.monotonic()
        assert llm.complete(PROMPT).text == "in time"
    assert time.monotonic() - started < 1.5
    assert len(fake.requests) == 2


def test_timeouts_until_exhaustion(fake):
    fake.script(*[slow("too late", delay=2.0) for _ in range(3)])
    with client_for(fake, timeout=0.2, max_retries=1) as llm, pytest.raises(ProviderError) as caught:
        llm.complete(PROMPT)
    assert "timed out" in str(caught.value)
    assert "after 2 attempt(s)" in str(caught.value)
    assert fake.url in str(caught.value)


def test_connection_refused_is_retried_then_reported():
    url = closed_port_url()
    with OpenAICompatibleLLM(f"{url}/v1", "m", API_KEY, max_retries=2, backoff=0.01) as llm:
        started = time.monotonic()
        with pytest.raises(ProviderError, match="ConnectError") as caught:
            llm.complete(PROMPT)
    assert f"{url}/v1/chat/completions" in str(caught.value)
    assert "after 3 attempt(s)" in str(caught.value)
    assert time.monotonic() - started < 2.0


# -- the pure parts of the retry policy -------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempt", "rand", "expected"),
    [
        pytest.param(0, 0.0, 0.25, id="first-low"),
        pytest.param(0, 1.0, 0.5, id="first-high"),
        pytest.param(3, 0.5, 3.0, id="fourth-mid"),
        pytest.param(10, 1.0, 8.0, id="capped"),
    ],
)
def test_backoff_delay(attempt, rand, expected):
    policy = RetryPolicy(backoff=0.5, max_delay=8.0)
    assert backoff_delay(attempt, policy, rand=lambda: rand) == pytest.approx(expected)


def test_retry_after_forms():
    now = datetime(2024, 5, 12, 12, 0, tzinfo=UTC)
    http_date = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert retry_after_seconds({"retry-after": "2"}, now) == 2.0
    assert retry_after_seconds({"retry-after": "0.5"}, now) == 0.5
    assert retry_after_seconds({"retry-after": http_date}, now) == pytest.approx(7.0)
    assert retry_after_seconds({"retry-after": "soon"}, now) is None
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert retry_after_seconds({}, now) is None


def test_next_delay_without_response_uses_backoff():
    assert 0.5 <= next_delay(1, None, RetryPolicy(backoff=0.5)) <= 1.0


def test_retry_policy_rejects_negative_values():
    with pytest.raises(InvalidInput):
        RetryPolicy(max_retries=-1)


def test_safe_url_drops_credentials_and_query():
    assert safe_url("https://user:pw@host.example/v1/chat?api-key=secret") == "https://host.example/v1/chat"
