"""Fixtures: real fake-protocol servers and clients pointed at them (small backoff, short timeouts)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.servers import API_KEY, FakeLLMServer, anthropic_server, openai_server


@pytest.fixture
def openai_fake() -> Iterator[FakeLLMServer]:
    with openai_server(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def anthropic_fake() -> Iterator[FakeLLMServer]:
    with anthropic_server(api_key=API_KEY) as server:
        yield server


@pytest.fixture(params=[pytest.param("openai", id="openai"), pytest.param("anthropic", id="anthropic")])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    """Each test using `fake` runs once per protocol."""
    factory = openai_server if request.param == "openai" else anthropic_server
    with factory(api_key=API_KEY) as server:
        yield server
