"""The sessions list (GET /v1/users/{user}/sessions and the Web UI's Sessions tab) comes from one
grouped query, not from the newest page of episodes: a user whose newest 500+ episodes all belong to
one busy session still sees the older sessions, paged, with their episode counts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from memstrata.models import Scope

from .conftest import Server

START = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
SMALL = 52  # more than one page (50) of sessions


@pytest.fixture(scope="module")
def sam(server: Server) -> str:
    """acme:sam: session s-early (3 turns, the oldest), 52 one-turn sessions, then s-busy (520 turns,
    the newest): the newest 500 episodes are all s-busy's."""
    memory = server.memory

    def say(session: str, count: int, start: datetime) -> None:
        turns = [
            {"role": "user", "content": f"{session} turn {i}", "at": start + timedelta(seconds=i)} for i in range(count)
        ]
        memory.add_messages(turns, scope=Scope("acme:sam", session_id=session))

    say("s-early", 3, START)
    for n in range(SMALL):
        say(f"s-small-{n:02d}", 1, START + timedelta(hours=1, minutes=n))
    say("s-busy", 520, START + timedelta(days=1))
    return "sam"


def get_sessions(server: Server, token: str, user: str, **params: int) -> dict[str, Any]:
    with server.client(token) as http:
        response = http.get(f"/v1/users/{user}/sessions", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_route_lists_every_session_paged_newest_first(server: Server, sam: str) -> None:
    first = get_sessions(server, server.keys.admin, sam, limit=50)
    busy = first["items"][0]
    assert (busy["session_id"], busy["episodes"], first["next_offset"]) == ("s-busy", 520, 50)
    assert datetime.fromisoformat(busy["first_at"]) == START + timedelta(days=1)
    assert datetime.fromisoformat(busy["last_at"]) == START + timedelta(days=1, seconds=519)
    rest = get_sessions(server, server.keys.admin, sam, limit=50, offset=50)
    listed = [s["session_id"] for s in first["items"] + rest["items"]]
    assert rest["next_offset"] is None and len(listed) == SMALL + 2 == len(set(listed))
    assert listed[0] == "s-busy" and listed[-1] == "s-early"
    assert listed[1:-1] == [f"s-small-{n:02d}" for n in range(SMALL - 1, -1, -1)]
    assert rest["items"][-1]["episodes"] == 3


def test_the_route_is_scoped_like_every_user_route(server: Server, sam: str) -> None:
    assert get_sessions(server, server.keys.alice, "alice") == {"items": [], "next_offset": None}
    with server.client(server.keys.alice) as http:
        assert http.get(f"/v1/users/{sam}/sessions").status_code == 403  # a key bound to alice
        assert http.get("/v1/users/alice/sessions", params={"limit": 0}).status_code == 422


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


@pytest.mark.browser
def test_the_sessions_tab_shows_sessions_beyond_the_newest_500_episodes(page: Page, server: Server, sam: str) -> None:
    page.goto(f"{server.url}/ui/")
    page.fill("#api-key", server.keys.admin)
    page.click("#key-form button")
    expect(page.locator("#whoami")).to_contain_text("tenant acme")
    page.fill("#user-id", sam)
    page.click("#user-form button")
    page.click('[data-tab="sessions"]')
    sessions = page.locator("#session-list li")
    expect(sessions).to_have_count(50)
    expect(sessions.first).to_contain_text("s-busy · 520 episodes")
    page.click("#more-sessions")
    expect(sessions).to_have_count(SMALL + 2)
    expect(page.locator("#more-sessions")).to_be_hidden()
    expect(sessions.last).to_contain_text("s-early · 3 episodes")
    page.click('[data-session="s-early"]')
    expect(page.locator("#session-title")).to_have_text("Session s-early")
    expect(page.locator("#session-turns")).to_contain_text("s-early turn 2")
