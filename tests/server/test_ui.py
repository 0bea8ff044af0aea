"""The Web UI in real headless Chromium (Debian's /usr/bin/chromium driven by playwright; `scripts/browser.sh`
installs it): every screen — users overview, memories with filters, edit and bulk forget, search, timeline,
context, sessions, procedures, entities with their memories, profile, metrics, erase with its receipt —
on a desktop and a phone viewport.

The tests write the screenshots of docs/screenshots/ (what docs/server.md shows).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from memstrata import SearchFilter
from memstrata.models import Scope
from memstrata.storage.base import MemoryFilter

from .conftest import Server

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None)
    yield page
    context.close()
    assert errors == [], f"JavaScript errors or content-security-policy violations: {errors}"


@pytest.fixture(scope="module")
def uma(server: Server) -> dict[str, str]:
    """A user with current and superseded memories, a profile fact and an entity."""
    memory, scope = server.memory, "acme:uma"
    tea = memory.add("Uma drinks green tea every morning", scope=scope, kind="preference")
    job = memory.add("Uma works at Initech", scope=scope)
    new_job = memory.supersede(job.id, "Uma works at Globex", scope=scope, reason="changed jobs")
    trip = memory.add("Uma is planning a trip to Kyoto in April", scope=scope, kind="event")
    memory.set_fact("work", "employer", "Globex", scope=scope, source="chat")
    memory.upsert_entity("Kyoto", scope=scope, type="place", summary="Where Uma travels in April", memory_id=trip.id)
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
    page.click('#memory-filters button[type="submit"]')
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
    receipt = page.locator("#receipt")
    expect(receipt).to_contain_text("request id")
    expect(receipt).to_contain_text("semantic 1")
    assert "{" not in receipt.inner_text() and "{" not in page.locator("#status").inner_text()
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


def test_content_security_policy_is_enforced_by_the_browser(browser: Browser, server: Server) -> None:
    """The UI passes its policy (every other test fails on a violation); an injected inline script is refused."""
    context = browser.new_context()
    try:
        page = context.new_page()
        messages: list[str] = []
        page.on("console", lambda msg: messages.append(msg.text))
        page.goto(f"{server.url}/ui/")
        expect(page.locator("#status")).to_contain_text("Enter an API key")
        page.evaluate(
            "() => { const s = document.createElement('script'); s.textContent = 'window.injected = 1';"
            " document.body.appendChild(s); }"
        )
        assert page.evaluate("() => window.injected") is None
        assert any("Content Security Policy" in m for m in messages), messages
    finally:
        context.close()


def test_wrong_key_says_so(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/ui/")
    page.fill("#api-key", "msk_not_a_real_key")
    page.click("#key-form button")
    status = page.locator("#status")
    expect(status).to_contain_text("This API key was not accepted")
    expect(status).to_have_class("status error")
    expect(page.locator("#workspace")).to_be_hidden()


def test_users_overview_with_counts(page: Page, server: Server, uma: dict[str, str]) -> None:
    page.goto(f"{server.url}/ui/")
    page.fill("#api-key", server.keys.admin)
    page.click("#key-form button")
    current = len(server.memory.list(scope="acme:uma"))  # the superseded memory is not counted
    row = page.locator('#users tr[data-user="uma"]')
    expect(row.locator("td").nth(1)).to_have_text(str(current))
    expect(row.locator("td").nth(2)).to_have_text("1")  # entities
    page.screenshot(path=ARTIFACTS / "users.png", full_page=True)
    row.get_by_role("button", name="uma").click()
    expect(page.locator("#current-user")).to_have_text("uma")
    expect(page.locator("#memories tbody tr")).to_have_count(current)


def test_memory_filters_edit_and_bulk_forget(page: Page, server: Server) -> None:
    memory, scope = server.memory, "acme:vera"
    memory.add("Vera likes jazz", scope=scope, kind="preference")
    memory.add("Vera's dentist is on Friday", scope=Scope(user_id=scope, agent_id="acme:planner"), kind="event")
    memory.add("Vera's cat is called Miso", scope=scope)
    sign_in(page, server, server.keys.admin, user="vera")
    expect(page.locator("#memories tbody tr")).to_have_count(3)
    page.fill("#filter-text", "cat")
    page.click('#memory-filters button[type="submit"]')
    expect(page.locator("#memories tbody tr")).to_have_count(1)
    page.fill("#filter-text", "")
    page.fill("#filter-agent", "planner")
    page.click('#memory-filters button[type="submit"]')
    expect(page.locator("#memories tbody")).to_contain_text("dentist")
    expect(page.locator("#memories tbody tr")).to_have_count(1)
    page.fill("#filter-agent", "")
    page.fill("#filter-before", "2000-01-01")
    page.click('#memory-filters button[type="submit"]')
    expect(page.locator("#memories tbody")).to_contain_text("No memories.")
    page.fill("#filter-before", "")
    page.select_option("#filter-kind", "preference")
    page.click('#memory-filters button[type="submit"]')
    expect(page.locator("#memories tbody tr")).to_have_count(1)
    page.select_option("#filter-kind", "")
    page.click('#memory-filters button[type="submit"]')

    jazz = page.locator("#memories tbody tr", has_text="jazz")
    jazz.get_by_role("button", name="Edit").click()
    page.fill("#edit-content", "Vera loves modal jazz")
    page.screenshot(path=ARTIFACTS / "edit.png")
    page.click("#edit-save")
    expect(page.locator("#memories tbody")).to_contain_text("Vera loves modal jazz")
    assert [r.content for r in memory.list(scope=scope) if "jazz" in r.content] == ["Vera loves modal jazz"]

    page.check("#pick-all")
    page.click("#forget-selected")
    page.click("#confirm-ok")
    expect(page.locator("#status")).to_contain_text("3 memories forgotten")
    assert memory.list(scope=scope) == []


def test_search_marks_superseded_hits(page: Page, server: Server, uma: dict[str, str]) -> None:
    sign_in(page, server, server.keys.admin)
    page.click('[data-tab="search"]')
    page.fill("#search-query", "where does Uma work")
    page.check("#search-superseded")
    page.click("#search-form button")
    old = page.locator(f'#hits tr[data-id="{uma["old_job"]}"]')
    expect(old).to_have_class("superseded")
    expect(old.locator(".tag.superseded")).to_have_text("superseded")
    expect(page.locator(f'#hits tr[data-id="{uma["job"]}"]')).to_have_class("current")
    page.screenshot(path=ARTIFACTS / "search-superseded.png", full_page=True)


def test_timeline_draws_validity_and_supersede_chains(page: Page, server: Server, uma: dict[str, str]) -> None:
    sign_in(page, server, server.keys.admin)
    page.click('[data-tab="timeline"]')
    drawn = server.memory.list(
        scope="acme:uma", filters=SearchFilter(include_superseded=True, kinds=["fact", "preference", "event"])
    )
    expect(page.locator("#timeline g.bar")).to_have_count(len(drawn))
    expect(page.locator(f'#timeline g.bar.superseded[data-id="{uma["old_job"]}"]')).to_have_count(1)
    expect(page.locator(f'#timeline g.bar.current[data-id="{uma["job"]}"]')).to_have_count(1)
    expect(page.locator("#timeline path.supersede")).to_have_count(1)
    order = page.locator("#timeline g.bar").evaluate_all("gs => gs.map(g => g.dataset.id)")
    assert order.index(uma["old_job"]) + 1 == order.index(uma["job"])  # a chain sits on consecutive rows


def test_timeline_of_facts_that_changed_over_months(page: Page, server: Server) -> None:
    memory, scope, now = server.memory, "acme:tia", datetime.now(UTC)
    memory.add("Tia likes oolong tea", scope=scope, kind="preference", created_at=now - timedelta(days=300))
    home = memory.add("Tia lives in Porto", scope=scope, created_at=now - timedelta(days=240))
    job = memory.add("Tia works at Initech", scope=scope, created_at=now - timedelta(days=200))
    memory.add(
        "Tia is running the Lisbon half marathon", scope=scope, kind="event", created_at=now - timedelta(days=60)
    )
    memory.supersede(home.id, "Tia lives in Lisbon", scope=scope, reason="moved")
    memory.supersede(job.id, "Tia works at Globex", scope=scope, reason="new job")
    sign_in(page, server, server.keys.admin, user="tia")
    page.click('[data-tab="timeline"]')
    expect(page.locator("#timeline g.bar")).to_have_count(6)
    expect(page.locator("#timeline path.supersede")).to_have_count(2)
    expect(page.locator("#timeline g.bar.superseded")).to_have_count(2)
    page.screenshot(path=ARTIFACTS / "timeline.png", full_page=True)


def test_context_sessions_procedures_entities_metrics(page: Page, server: Server, uma: dict[str, str]) -> None:
    session = Scope(user_id="acme:uma", session_id="trip-planning")
    server.memory.add_messages([("user", "Let's book the Kyoto hotel"), ("assistant", "Which dates?")], scope=session)
    server.memory.add_procedure("write an email", scope="acme:uma", instruction="Sign as 'Uma from Globex'")
    hotel = server.memory.add("Uma booked the Ryokan Kyoto for April 3-7", scope="acme:uma", kind="event")
    server.memory.upsert_entity("Kyoto", scope="acme:uma", memory_id=hotel.id)
    sign_in(page, server, server.keys.admin)

    page.click('[data-tab="context"]')
    page.fill("#context-query", "Kyoto trip")
    page.click("#context-form button")
    expect(page.locator("#context-text")).to_contain_text("Kyoto")
    expect(page.locator("#context-parts tbody")).to_contain_text("memories")
    page.screenshot(path=ARTIFACTS / "context.png", full_page=True)

    page.click('[data-tab="sessions"]')
    page.click('[data-session="trip-planning"]')
    expect(page.locator("#session-turns")).to_contain_text("Let's book the Kyoto hotel")
    expect(page.locator("#session-summary")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "sessions.png", full_page=True)

    page.click('[data-tab="procedures"]')
    page.fill("#procedure-task", "email")
    page.click("#procedure-form button")
    expect(page.locator("#procedures tbody")).to_contain_text("Sign as 'Uma from Globex'")

    page.click('[data-tab="entities"]')
    page.locator('#entities tr[data-entity="Kyoto"]').get_by_role("button", name="Kyoto").click()
    expect(page.locator("#entities tr.history")).to_contain_text("Uma booked the Ryokan Kyoto for April 3-7")
    page.screenshot(path=ARTIFACTS / "entities.png", full_page=True)

    page.click('[data-tab="metrics"]')
    expect(page.locator("#metrics tbody")).to_contain_text("memstrata_http_requests")
    page.screenshot(path=ARTIFACTS / "metrics.png", full_page=True)


def test_phone_viewport_has_no_sideways_scrolling(browser: Browser, server: Server, uma: dict[str, str]) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    phone = context.new_page()
    sign_in(phone, server, server.keys.admin)
    for tab in ("memories", "search", "timeline", "profile"):
        phone.click(f'[data-tab="{tab}"]')
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 391, f"{tab}: the page is {width}px wide on a 390px screen"
    phone.click('[data-tab="memories"]')
    phone.screenshot(path=ARTIFACTS / "phone.png", full_page=True)
    context.close()
