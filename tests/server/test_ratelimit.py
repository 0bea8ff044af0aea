"""Rate limits over real HTTP: a burst of wrong keys from one address gets 429 with Retry-After, a key over
its own limit gets 429 while other keys go on, the window frees itself; security headers on /ui."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from memstrata.errors import InvalidInput
from memstrata.server.app import create_app
from memstrata.server.auth import KeyRing
from memstrata.server.config import ServerConfig
from memstrata.server.headers import UI_CONTENT_SECURITY_POLICY
from memstrata.server.ratelimit import RateLimiter

from .conftest import TENANT, open_memory, serve


@dataclass
class Limited:
    url: str
    alice: str
    bob: str


@pytest.fixture
def limited(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Limited]:
    memory = open_memory(tmp_path_factory.mktemp("ratelimit") / "memstrata.db")
    ring = KeyRing(memory.store)
    _, alice = ring.create(TENANT, user="alice")
    _, bob = ring.create(TENANT, user="bob")
    overrides = getattr(request, "param", {})
    app = create_app(memory=memory, config=ServerConfig(auth=True, worker=False, **overrides))
    try:
        with serve(app) as url:
            yield Limited(url, alice, bob)
    finally:
        memory.close()


def test_a_burst_of_wrong_keys_gets_429_with_retry_after(limited: Limited) -> None:
    """Defaults: 20 failed authentications per minute per address."""
    statuses = []
    with httpx.Client(base_url=limited.url, timeout=30) as client:
        for attempt in range(300):
            response = client.get("/v1/whoami", headers={"Authorization": f"Bearer msk_guess{attempt}"})
            statuses.append(response.status_code)
        last = response
        valid = client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.alice}"})
        mcp = client.post("/mcp", headers={"Authorization": f"Bearer {limited.alice}"}, json={})
        health = client.get("/healthz")
    assert statuses[:20] == [401] * 20 and statuses[20:] == [429] * 280
    assert last.headers["content-type"] == "application/problem+json"
    assert 1 <= int(last.headers["Retry-After"]) <= 60 and "failed authentications" in last.json()["detail"]
    assert valid.status_code == 429 and mcp.status_code == 429  # the whole address waits, whatever its key
    assert health.status_code == 200  # liveness probes are not limited


@pytest.mark.parametrize("limited", [{"rate_limit": "5/minute"}], indirect=True)
def test_a_key_over_its_limit_gets_429_and_other_keys_go_on(limited: Limited) -> None:
    with httpx.Client(base_url=limited.url, timeout=30) as client:
        alice = [client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.alice}"}) for _ in range(7)]
        bob = client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.bob}"})
    assert [r.status_code for r in alice] == [200] * 5 + [429] * 2
    assert 1 <= int(alice[-1].headers["Retry-After"]) <= 60 and "this API key" in alice[-1].json()["detail"]
    assert bob.status_code == 200


@pytest.mark.parametrize("limited", [{"auth_failure_limit": "3/second"}], indirect=True)
def test_the_window_frees_itself(limited: Limited) -> None:
    with httpx.Client(base_url=limited.url, timeout=30) as client:
        wrong = [client.get("/v1/whoami", headers={"Authorization": "Bearer msk_nope"}).status_code for _ in range(4)]
        refused = client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.alice}"})
        time.sleep(int(refused.headers["Retry-After"]) + 0.1)
        again = client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.alice}"})
    assert wrong == [401, 401, 401, 429] and refused.status_code == 429 and again.status_code == 200


def test_a_malformed_limit_is_refused() -> None:
    with pytest.raises(InvalidInput, match="MEMSTRATA_RATE_LIMIT"):
        RateLimiter(per_key="lots", per_failing_source="20/minute")


def test_ui_has_security_headers_and_the_api_does_not_need_them(limited: Limited) -> None:
    with httpx.Client(base_url=limited.url, timeout=30) as client:
        ui = client.get("/ui/")
        script = client.get("/ui/app.js")
        api = client.get("/v1/whoami", headers={"Authorization": f"Bearer {limited.alice}"})
    assert ui.status_code == 200 and ui.headers["Content-Security-Policy"] == UI_CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in UI_CONTENT_SECURITY_POLICY and "unsafe-inline" not in UI_CONTENT_SECURITY_POLICY
    assert ui.headers["X-Frame-Options"] == "DENY" and ui.headers["X-Content-Type-Options"] == "nosniff"
    assert script.headers["Content-Security-Policy"] == UI_CONTENT_SECURITY_POLICY
    assert "Content-Security-Policy" not in api.headers


def wrong_keys(url: str, forwarded_for: Callable[[int], str], n: int) -> list[int]:
    with httpx.Client(base_url=url, timeout=30) as client:
        return [
            client.get(
                "/v1/whoami", headers={"Authorization": f"Bearer msk_guess{i}", "X-Forwarded-For": forwarded_for(i)}
            ).status_code
            for i in range(n)
        ]


def test_a_forged_forwarded_for_does_not_escape_the_address_limit(limited: Limited) -> None:
    """No trusted proxy by default: from 127.0.0.1, a new X-Forwarded-For per request counts as 127.0.0.1."""
    statuses = wrong_keys(limited.url, lambda i: f"203.0.113.{i % 250}", 40)
    assert statuses[:20] == [401] * 20 and statuses[20:] == [429] * 20


@pytest.mark.parametrize("limited", [{"trusted_proxies": ["127.0.0.0/8"]}], indirect=True)
def test_a_trusted_proxy_names_the_client(limited: Limited) -> None:
    one_client = wrong_keys(limited.url, lambda i: "198.51.100.7", 22)
    assert one_client == [401] * 20 + [429] * 2
    spoofed = wrong_keys(limited.url, lambda i: f"10.9.9.{i}, 198.51.100.7", 2)  # the client's own hops don't count
    other_client = wrong_keys(limited.url, lambda i: "198.51.100.8", 1)
    assert spoofed == [429, 429] and other_client == [401]


def test_trusted_proxies_are_read_from_the_environment_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_TRUSTED_PROXIES", "10.0.0.5, 192.168.0.0/16")
    assert ServerConfig().trusted_proxies == ["10.0.0.5", "192.168.0.0/16"]
    monkeypatch.setenv("MEMSTRATA_TRUSTED_PROXIES", "10.0.0.5,the-proxy")
    with pytest.raises(InvalidInput, match="MEMSTRATA_TRUSTED_PROXIES: 'the-proxy' is not an IP address"):
        create_app(config=ServerConfig(mcp=False, ui=False))


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("127.0.0.1", ["203.0.113.9"], "127.0.0.1"),  # peer not trusted (no proxies configured below)
        ("10.0.0.5", ["203.0.113.9"], "203.0.113.9"),
        ("10.0.0.5", ["6.6.6.6, 203.0.113.9"], "203.0.113.9"),  # the leftmost hop is the client's own say
        ("10.0.0.5", ["203.0.113.9, 10.0.0.7"], "203.0.113.9"),  # a chain of trusted proxies
        ("10.0.0.5", ["10.0.0.7"], "10.0.0.7"),  # only proxies: the farthest one
        ("10.0.0.5", ["203.0.113.9", "10.0.0.7"], "203.0.113.9"),  # several headers read as one list
        ("10.0.0.5", ["not-an-ip"], "10.0.0.5"),
        ("10.0.0.5", [], "10.0.0.5"),
        ("2001:db8::1", ["203.0.113.9"], "2001:db8::1"),
    ],
)
def test_client_address(peer: str, forwarded: list[str], expected: str) -> None:
    from memstrata.server.proxies import client_address, parse_networks

    networks = parse_networks(["10.0.0.0/24"]) if peer != "127.0.0.1" else ()
    assert client_address(peer, forwarded, networks) == expected
