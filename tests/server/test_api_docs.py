"""/docs and /redoc work offline: their scripts and styles come from the fastapi-offline package's bundled
assets served by memstrata itself, never from a CDN (checked in the HTML and in Chromium with every
request to another host refused)."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Browser, Route, expect

from memstrata.server.app import DOCS_ASSETS_URL

from .conftest import Server

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.I)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_nothing_from_another_host(server: Server, page: str) -> None:
    response = httpx.get(f"{server.url}{page}")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    html = response.text
    assert EXTERNAL.search(html) is None, html
    assets = re.findall(rf"""["']({re.escape(DOCS_ASSETS_URL)}/[^"']+)["']""", html)
    assert any(a.endswith(".js") for a in assets)
    for asset in assets:
        response = httpx.get(f"{server.url}{asset}")
        assert response.status_code == 200 and len(response.content) > 1000, asset


@pytest.mark.browser
@pytest.mark.parametrize(("page", "shown"), [("/docs", ".opblock-tag"), ("/redoc", "[role=menuitem]")])
def test_docs_render_in_a_browser_without_network(server: Server, browser: Browser, page: str, shown: str) -> None:
    context = browser.new_context()
    refused: list[str] = []

    def only_local(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_local)
    tab = context.new_page()
    tab.goto(f"{server.url}{page}")
    expect(tab.locator(shown).first).to_be_visible(timeout=20_000)
    assert tab.get_by_text("memories").first.is_visible()
    context.close()
    assert refused == []
