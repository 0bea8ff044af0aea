"""resolve_llm: spec strings and environment variables, read at call time."""

from __future__ import annotations

import contextlib

import pytest

from memstrata.errors import ConfigurationError, ProviderError
from memstrata.llm import AnthropicLLM, ChatMessage, OpenAICompatibleLLM, ScriptedLLM, resolve_llm
from memstrata.llm.registry import OLLAMA_BASE_URL, OPENAI_BASE_URL
from tests.llm.servers import API_KEY, anthropic_server, openai_server

PROMPT = [ChatMessage("user", "ping")]


@pytest.mark.parametrize("spec", [None, "", "none", "OFF"])
def test_disabled_specs_mean_no_llm(spec):
    assert resolve_llm(spec, env={}) is None


def test_openai_defaults():
    llm = resolve_llm("openai:gpt-4o-mini", env={"OPENAI_API_KEY": "sk-a"})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.base_url, llm.model) == (OPENAI_BASE_URL, "gpt-4o-mini")
    llm.close()


def test_openai_without_key_for_the_hosted_api_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        resolve_llm("openai:gpt-4o-mini", env={})


def test_openai_compatible_local_server_needs_no_key():
    llm = resolve_llm("openai:qwen2.5", env={"MEMSTRATA_LLM_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert llm.base_url == "http://127.0.0.1:8000/v1"
    llm.close()


def test_ollama_defaults():
    llm = resolve_llm("ollama:llama3.2", env={})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.base_url, llm.model) == (OLLAMA_BASE_URL, "llama3.2")
    llm.close()


def test_model_names_may_contain_colons():
    llm = resolve_llm("ollama:qwen2.5:7b-instruct", env={})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert llm.model == "qwen2.5:7b-instruct"
    llm.close()


def test_anthropic_needs_its_key():
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        resolve_llm("anthropic:claude-haiku-4-5", env={"OPENAI_API_KEY": "sk-other"})
    llm = resolve_llm("anthropic:claude-haiku-4-5", env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert isinstance(llm, AnthropicLLM)
    llm.close()


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        pytest.param("gemini:pro", "unknown LLM spec", id="unknown-prefix"),
        pytest.param("openai", "names no model", id="no-colon"),
        pytest.param("ollama: ", "names no model", id="empty-model"),
    ],
)
def test_bad_specs(spec, problem):
    with pytest.raises(ConfigurationError, match=problem):
        resolve_llm(spec, env={"OPENAI_API_KEY": "k"})


def test_bad_tuning_value():
    with pytest.raises(ConfigurationError, match="MEMSTRATA_LLM_TIMEOUT"):
        resolve_llm("ollama:m", env={"MEMSTRATA_LLM_TIMEOUT": "soon"})


def test_environment_is_read_at_call_time(monkeypatch):
    with openai_server(api_key=API_KEY) as server:
        server.script("pong")
        monkeypatch.setenv("MEMSTRATA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("MEMSTRATA_LLM_API_KEY", API_KEY)
        monkeypatch.setenv("MEMSTRATA_LLM_MAX_RETRIES", "0")
        llm = resolve_llm("ollama:llama3.2")
        assert llm is not None
        with contextlib.closing(llm):
            assert llm.complete(PROMPT).text == "pong"
            with pytest.raises(ProviderError, match="after 1 attempt"):
                llm.complete(PROMPT)  # script exhausted → 500, and no retries were configured
        assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_anthropic_spec_end_to_end(monkeypatch):
    with anthropic_server(api_key=API_KEY) as server:
        server.script("pong")
        monkeypatch.setenv("MEMSTRATA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.delenv("MEMSTRATA_LLM_API_KEY", raising=False)
        llm = resolve_llm("anthropic:claude-test")
        assert llm is not None
        with contextlib.closing(llm):
            assert llm.complete(PROMPT).text == "pong"
        assert server.requests[0].json["model"] == "claude-test"


# -- ScriptedLLM, the in-process fake -----------------------------------------------------------------


def test_scripted_llm_replies_in_order_and_records_calls():
    llm = ScriptedLLM(["one two", lambda messages: f"echo {messages[-1].content}"])
    assert llm.complete(PROMPT, json_mode=True).text == "one two"
    assert llm.complete(PROMPT, max_tokens=9).text == "echo ping"
    assert [(call.json_mode, call.max_tokens) for call in llm.calls] == [(True, 1024), (False, 9)]
    assert llm.calls[0].prompt == "ping"
    assert (llm.usage.calls, llm.usage.input_tokens, llm.usage.output_tokens) == (2, 2, 4)


def test_scripted_llm_raises_scripted_errors_and_runs_out():
    llm = ScriptedLLM([ProviderError("endpoint down")])
    with pytest.raises(ProviderError, match="endpoint down"):
        llm.complete(PROMPT)
    with pytest.raises(ProviderError, match="exhausted after 1 call"):
        llm.complete(PROMPT)
    assert llm.usage.snapshot().failures == 2
    llm.add("later")
    assert llm.complete(PROMPT).text == "later"
