"""The HTTP adapters against real local servers speaking each protocol."""

from __future__ import annotations

import threading

import pytest

from memstrata.errors import ConfigurationError, InvalidInput, ProviderError
from memstrata.llm import AnthropicLLM, ChatMessage, LLMClient, OpenAICompatibleLLM
from memstrata.llm.anthropic import JSON_INSTRUCTION
from tests.llm.servers import API_KEY, Reply, client_for, completion, error, openai_server

PROMPT = [ChatMessage("system", "You are terse."), ChatMessage("user", "Say hello to Alice")]


def test_clients_satisfy_protocol(fake):
    with client_for(fake) as llm:
        assert isinstance(llm, LLMClient)


def test_completion_returns_text_tokens_and_model(fake):
    fake.script(completion("Hello Alice", input_tokens=12, output_tokens=2, model="served-model"))
    with client_for(fake) as llm:
        response = llm.complete(PROMPT)
    assert (response.text, response.input_tokens, response.output_tokens) == ("Hello Alice", 12, 2)
    assert response.model == "served-model"
    assert response.finish_reason == "stop"
    assert not response.truncated


def test_usage_accumulates_over_calls(fake):
    fake.script(completion("a", input_tokens=10, output_tokens=1), completion("b c", input_tokens=7, output_tokens=2))
    with client_for(fake) as llm:
        llm.complete(PROMPT)
        llm.complete(PROMPT)
        totals = llm.usage.snapshot()
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.failures) == (2, 17, 3, 0)
    assert totals.cost(input_per_million=1.0, output_per_million=2.0) == pytest.approx((17 + 6) / 1e6)


def test_usage_is_thread_safe_under_concurrent_calls(fake):
    fake.script(*[completion("ok", input_tokens=3, output_tokens=1) for _ in range(16)])
    with client_for(fake) as llm:
        threads = [threading.Thread(target=llm.complete, args=(PROMPT,)) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        totals = llm.usage.snapshot()
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (16, 48, 16)
    assert len(fake.requests) == 16


def test_length_finish_reason_marks_truncation(fake):
    fake.script(completion('{"facts": [', finish_reason="length"))
    with client_for(fake) as llm:
        response = llm.complete(PROMPT, max_tokens=5)
    assert response.finish_reason == "length"
    assert response.truncated


def test_openai_request_shape(openai_fake):
    openai_fake.script("hi")
    with client_for(openai_fake) as llm:
        llm.complete(PROMPT, max_tokens=77, temperature=0.3, json_mode=True)
    request = openai_fake.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    body = request.json
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hello to Alice"},
    ]
    assert (body["max_tokens"], body["temperature"]) == (77, 0.3)
    assert body["response_format"] == {"type": "json_object"}


def test_openai_without_json_mode_sends_no_response_format(openai_fake):
    openai_fake.script("hi")
    with client_for(openai_fake) as llm:
        llm.complete(PROMPT)
    assert "response_format" not in openai_fake.requests[0].json


def test_openai_without_key_sends_no_authorization():
    with openai_server() as server, OpenAICompatibleLLM(server.base_url, "llama3.2") as llm:
        server.script("local answer")
        assert llm.complete(PROMPT).text == "local answer"
        assert "authorization" not in server.requests[0].headers


def test_server_rejecting_response_format_is_asked_again_without_it(openai_fake):
    openai_fake.script(
        error(400, "'response_format.type' must be 'json_schema' or 'text'"), '{"ok": true}', '{"ok": 1}'
    )
    with client_for(openai_fake) as llm:
        assert llm.complete(PROMPT, json_mode=True).text == '{"ok": true}'
        llm.complete(PROMPT, json_mode=True)
    bodies = [request.json for request in openai_fake.requests]
    assert "response_format" in bodies[0]
    assert "response_format" not in bodies[1]
    assert "response_format" not in bodies[2], "the adapter remembers the server's refusal"


def test_anthropic_request_shape(anthropic_fake):
    anthropic_fake.script("hi")
    messages = [
        ChatMessage("system", "Rule one."),
        ChatMessage("user", "first"),
        ChatMessage("user", "second"),
        ChatMessage("assistant", "ok"),
        ChatMessage("user", "third"),
    ]
    with client_for(anthropic_fake) as llm:
        llm.complete(messages, max_tokens=50, temperature=1.5, json_mode=True)
    request = anthropic_fake.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    body = request.json
    assert body["system"] == f"Rule one.\n\n{JSON_INSTRUCTION}"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
    ]
    assert (body["max_tokens"], body["temperature"]) == (50, 1.0)


def test_anthropic_joins_text_blocks_and_ignores_thinking(anthropic_fake):
    body = {
        "type": "message",
        "model": "claude-test",
        "content": [
            {"type": "thinking", "thinking": "secret reasoning"},
            {"type": "text", "text": "Hello "},
            {"type": "text", "text": "Alice"},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 4, "output_tokens": 2},
    }
    anthropic_fake.script(Reply(body=body))
    with client_for(anthropic_fake) as llm:
        response = llm.complete(PROMPT)
    assert response.text == "Hello Alice"
    assert (response.input_tokens, response.output_tokens) == (4, 2)


def test_anthropic_needs_a_user_turn(anthropic_fake):
    with client_for(anthropic_fake) as llm, pytest.raises(InvalidInput, match="at least one user"):
        llm.complete([ChatMessage("system", "only a system prompt")])
    assert anthropic_fake.requests == []


def test_anthropic_requires_key():
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("claude-test", "")


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        pytest.param(400, "HTTP 400", id="bad-request"),
        pytest.param(404, "/v1", id="not-found-hints-at-base-url"),
        pytest.param(422, "HTTP 422", id="unprocessable"),
    ],
)
def test_client_errors_fail_at_once(openai_fake, status, hint):
    openai_fake.script(error(status, "nope"), "never sent")
    with client_for(openai_fake) as llm, pytest.raises(ProviderError, match=hint) as caught:
        llm.complete(PROMPT)
    assert len(openai_fake.requests) == 1
    assert llm.usage.snapshot().failures == 1
    assert openai_fake.url in str(caught.value)


def test_wrong_key_error_never_shows_the_key(fake):
    fake.script(error(401, f"Incorrect API key provided: {API_KEY}"))
    with client_for(fake) as llm, pytest.raises(ProviderError) as caught:
        llm.complete(PROMPT)
    message = str(caught.value)
    assert "401" in message
    assert API_KEY not in message
    assert API_KEY not in repr(llm)


def test_server_checks_the_real_key(fake):
    """The fake refuses a wrong key like the real APIs do (so auth headers are really sent)."""
    fake.script("never sent")
    with client_for(fake, api_key="sk-wrong") as llm, pytest.raises(ProviderError, match="401"):
        llm.complete(PROMPT)
    assert fake.remaining == 1


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("<html>gateway</html>", id="not-json"),
        pytest.param({"unexpected": True}, id="no-choices-or-content"),
    ],
)
def test_malformed_success_body_is_provider_error(fake, body):
    fake.script(Reply(body=body))
    with client_for(fake) as llm, pytest.raises(ProviderError, match="127.0.0.1"):
        llm.complete(PROMPT)


@pytest.mark.parametrize(
    ("messages", "kwargs", "problem"),
    [
        pytest.param([], {}, "at least one message", id="no-messages"),
        pytest.param(PROMPT, {"max_tokens": 0}, "max_tokens", id="zero-max-tokens"),
        pytest.param(PROMPT, {"temperature": 3.0}, "temperature", id="temperature-too-high"),
    ],
)
def test_invalid_requests_are_refused_before_the_network(fake, messages, kwargs, problem):
    with client_for(fake) as llm, pytest.raises(InvalidInput, match=problem):
        llm.complete(messages, **kwargs)
    assert fake.requests == []


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("ftp://example.com/v1", id="wrong-scheme"),
        pytest.param("localhost:8000", id="no-scheme"),
        pytest.param("http://", id="no-host"),
    ],
)
def test_bad_base_url_is_configuration_error(url):
    with pytest.raises(ConfigurationError, match="LLM base URL"):
        OpenAICompatibleLLM(url, "m")


def test_chat_message_rejects_unknown_role():
    with pytest.raises(InvalidInput, match="unknown chat role"):
        ChatMessage("tool", "x")  # type: ignore[arg-type]
