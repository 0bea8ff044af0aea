"""The Web UI in real headless Chromium (Debian's /usr/bin/chromium driven by playwright; `scripts/browser.sh`
installs it): load, browse, history, search with component scores, forget, erase.

Screenshots go to test-artifacts/ui/ (gitignored).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from memstrata.storage.base import MemoryFilter

from .conftest import Server

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors: {errors}"


@pytest.fixture(scope="module")
def uma(server: Server) -> dict[str, str]:
    """A user with current and superseded memories, a profile fact and an entity."""
    memory, scope = server.memory, "acme:uma"
    tea = memory.add("Uma drinks green tea every morning", scope=scope, kind="preference")
    job = memory.add("Uma works at Initech", scope=scope)
    new_job = memory.supersede(job.id, "Uma works at Globex", scope=scope, reason="changed jobs")
    trip = memory.add("Uma is planning a trip to Kyoto in April", scope=scope, kind="event")
    memory.set_fact("work", "employer", "Globex", scope=scope, source="chat")
    memory.upsert_entity("Kyoto", scope=scope, type="place", summary="Where Uma travels in April")
    return {"tea": tea.id, "old_job": job.id, "job": new_job.id, "trip": trip.id}


def sign_in(page: Page, server: Server, key: str, user: str | None = "uma") -> None:
    page.goto(f"{server.url}/ui/")
    expect(page.locator("#status")).to_contain_text("Enter an API key")
    page.fill("#api-key", key)
    page.click("#key-form button")
    expect(page.locator("#whoami")).to_contain_text("tenant acme")
    if user is not None and not page.locator("#user-id").evaluate("el => el.readOnly"):
        page.fill("#user-id", user)
        page.click("#user-form button")
    expect(page.locator("#workspace")).to_be_visible()


def rows(page: Page, table: str) -> list[str]:
    return page.locator(f"#{table} tbody tr").all_inner_texts()


def test_load_and_browse_memories_with_validity_and_history(page: Page, server: Server, uma: dict[str, str]) -> None:
    sign_in(page, server, server.keys.admin)
    expect(page.locator("#current-user")).to_have_text("uma")
    expect(page.locator("#memories tbody tr")).to_have_count(3)
    assert not any("Initech" in r for r in rows(page, "memories"))
    page.check("#filter-superseded")
    page.click("#memory-filters button")
    expect(page.locator("#memories tbody tr")).to_have_count(4)
    old = page.locator(f'#memories tr[data-id="{uma["old_job"]}"]')
    expect(old).to_have_class("superseded")
    expect(old).to_contain_text(f"superseded by {uma['job']}")
    old.get_by_role("button", name="History").click()
    expect(page.locator("#memories tr.history")).to_contain_text(
        "supersede: Uma works at Initech → Uma works at Globex"
    )
    page.screenshot(path=ARTIFACTS / "memories.png", full_page=True)

    page.click('[data-tab="entities"]')
    expect(page.locator("#entities tbody")).to_contain_text("Where Uma travels in April")
    page.click('[data-tab="profile"]')
    expect(page.locator("#facts tbody")).to_contain_text("Globex")
    page.screenshot(path=ARTIFACTS / "profile.png", full_page=True)


def test_search_playground_shows_component_scores(page: Page, server: Server, uma: dict[str, str]) -> None:
    sign_in(page, server, server.keys.admin)
    page.click('[data-tab="search"]')
    page.fill("#search-query", "green tea")
    page.click("#search-form button")
    first = page.locator("#hits tbody tr").first
    expect(first).to_have_attribute("data-id", uma["tea"])
    for component in ("semantic", "keyword", "hybrid"):
        expect(first.locator(f'[data-component="{component}"]')).to_have_count(1)
    page.select_option("#search-strategy", "keyword")
    page.click("#search-form button")
    expect(page.locator("#hits tbody tr").first.locator('[data-component="keyword"]')).to_have_count(1)
    page.screenshot(path=ARTIFACTS / "search.png", full_page=True)


def test_forget_asks_for_confirmation(page: Page, server: Server, uma: dict[str, str]) -> None:
    sign_in(page, server, server.keys.admin)
    row = page.locator(f'#memories tr[data-id="{uma["trip"]}"]')
    row.get_by_role("button", name="Forget").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "forget-confirm.png")
    page.click('#confirm-dialog button[value="cancel"]')
    expect(row).to_be_visible()
    assert server.memory.store.get("acme:uma", [uma["trip"]])

    row.get_by_role("button", name="Forget").click()
    page.click("#confirm-ok")
    expect(row).to_have_count(0)
    expect(page.locator("#status")).to_contain_text("Memory forgotten")
    assert server.memory.store.get("acme:uma", [uma["trip"]]) == []


def test_user_key_is_locked_to_its_user(page: Page, server: Server) -> None:
    server.memory.add("Alice keeps bees", scope="acme:alice")
    sign_in(page, server, server.keys.alice, user=None)
    expect(page.locator("#current-user")).to_have_text("alice")
    assert page.locator("#user-id").evaluate("el => el.readOnly")
    expect(page.locator("#memories tbody")).to_contain_text("Alice keeps bees")
    expect(page.locator("#memories tbody")).not_to_contain_text("Uma")


def test_erase_needs_the_typed_user_id(page: Page, server: Server) -> None:
    server.memory.add("Walt collects stamps", scope="acme:walt")
    server.memory.set_fact("hobby", "main", "stamps", scope="acme:walt")
    sign_in(page, server, server.keys.admin, user="walt")
    expect(page.locator("#memories tbody")).to_contain_text("Walt collects stamps")

    with page.expect_download() as download:
        page.click("#export-user")
    exported = json.loads(Path(download.value.path()).read_text())
    assert exported["format"] == "memstrata-export" and exported["memories"][0]["content"] == "Walt collects stamps"

    page.click("#erase-user")
    page.fill("#confirm-input", "wrong")
    page.click("#confirm-ok")
    expect(page.locator("#status")).to_contain_text("Erase cancelled")
    assert server.memory.list(scope="acme:walt")

    page.click("#erase-user")
    expect(page.locator("#confirm-expected")).to_have_text("walt")
    page.fill("#confirm-input", "walt")
    page.screenshot(path=ARTIFACTS / "erase-confirm.png")
    page.click("#confirm-ok")
    expect(page.locator("#status")).to_contain_text("User walt erased")
    expect(page.locator("#memories tbody")).to_contain_text("No memories.")
    page.screenshot(path=ARTIFACTS / "erased.png", full_page=True)
    store = server.memory.store
    assert store.list_memories("acme:walt", MemoryFilter(include_superseded=True), limit=10) == []
    assert server.memory.facts(scope="acme:walt") == []


def test_insecure_mode_shows_a_banner(page: Page, insecure_server: Server) -> None:
    page.goto(f"{insecure_server.url}/ui/")
    expect(page.locator("#insecure-banner")).to_be_visible()
    expect(page.locator("#whoami")).to_contain_text("tenant default")
    page.screenshot(path=ARTIFACTS / "insecure.png")
