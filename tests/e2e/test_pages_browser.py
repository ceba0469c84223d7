"""The pages in a real browser: Debian's headless Chromium, driven by Playwright, against a live server.

One server per module, seeded with the demo history, with an engineer, a viewer and a sender token.
Every page visited is saved as a screenshot under ``artifacts/screenshots/`` for a person to look at.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.net import wait_for
from tests.support.server import LiveServer
from tests.support.slack import SlackReceiver

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "correct horse battery staple"
# Resembles the seeded checkout pool incidents, so the briefing recalls and cites them...
ALERT = {
    "service": "checkout-service",
    "title": "Checkout p99 latency over 2s",
    "description": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "severity": "critical",
    "labels": {"env": "prod", "region": "eu-west-1"},
}
# ...but it is resolved with a cause memory has never seen, so the profile gains a pattern for it.
POST_MORTEM = {
    "symptom": "Checkout p99 over 2 s; payment confirmations stalled",
    "error_signature": "x509: certificate signed by unknown authority (fraud-scoring sidecar mTLS)",
    "root_cause": "The fraud-scoring sidecar shipped without the new intermediate CA, so every mTLS "
    "handshake to it failed and checkout waited for the 30 s scoring timeout",
    "resolution_steps": "1. Confirmed handshake failures in the sidecar logs\n2. Rolled out the CA bundle",
    "runbook_used": "",
    "outcome": "Latency back to normal within 3 minutes of the CA rollout",
    "failed_attempts": "Raising the connection pool did nothing; the pool was idle",
}


@dataclass
class Site:
    server: LiveServer
    token: str

    @property
    def url(self) -> str:
        return self.server.url

    def post_alert(self, **fields: object) -> str:
        response = httpx.post(
            f"{self.url}/api/v1/alerts",
            headers={"Authorization": f"Bearer {self.token}"},
            json={**ALERT, **fields},
            timeout=30,
        )
        assert response.status_code in (200, 202), response.text
        [incident] = response.json()["incidents"]
        return incident


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    env = {"RECALLOPS_PROFILE_REFRESH_DEBOUNCE_S": "1", "RECALLOPS_PROFILE_CHECK_S": "0.2"}
    server = LiveServer(tmp_path_factory.mktemp("browser") / "data", env=env)
    server.cli("seed")
    server.start()
    try:
        server.cli("user", "add", "ana", "--role", "engineer", "--password", PASSWORD)
        server.cli("user", "add", "vic", "--role", "viewer", "--password", PASSWORD)
        token = server.cli("token", "create", "--name", "alertmanager", "--scope", "alerts:write")
        yield Site(server, token.stdout.strip().splitlines()[-1])
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install-system-deps.sh (Debian's chromium)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def new_page(browser: Browser, *, width: int = 1280, height: int = 900, dark: bool = False) -> Page:
    context = browser.new_context(
        viewport={"width": width, "height": height}, color_scheme="dark" if dark else "light"
    )
    context.set_default_timeout(30_000)
    return context.new_page()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sign_in(page: Page, site: Site, name: str, path: str = "/incidents") -> None:
    page.goto(f"{site.url}{path}")
    assert "/signin" in page.url
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{path}")


def fits_width(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_an_engineer_works_an_incident_from_alert_to_profile(site: Site, browser: Browser) -> None:
    page = new_page(browser)
    page.goto(f"{site.url}/incidents")
    shot(page, "01-sign-in")
    sign_in(page, site, "ana")

    incident = site.post_alert()
    page.locator(f"a:text-is('{incident}')").wait_for()  # the list refreshes itself
    assert fits_width(page)
    shot(page, "02-incident-list")

    page.click(f"a:text-is('{incident}')")
    page.locator("#related li").first.wait_for()  # the briefing arrives while the page is open
    summary = page.locator("#summary .lead").inner_text()
    assert "INC-" in summary
    assert page.locator("#signal").get_by_text("env=prod").is_visible()
    assert fits_width(page)
    shot(page, "03-incident")

    citation = page.locator("#incident-live a.cite[href^='/records/']").first
    cited = citation.get_attribute("href")
    assert cited
    citation.click()
    page.wait_for_url(f"**{cited}")
    assert page.locator("#record-fields").get_by_text("Root cause").is_visible()
    shot(page, "04-cited-record")

    page.goto(f"{site.url}/incidents/{incident}/resolve")
    assert "Checkout p99 latency over 2s" in page.input_value("#f-symptom")
    for name, value in POST_MORTEM.items():
        page.fill(f"#f-{name}", value)
    page.fill("#f-outcome", "")
    page.click("button:text('Resolve incident')")
    assert page.locator("#e-outcome").inner_text() == "must not be blank"  # inline, before any request
    assert page.url.endswith("/resolve")
    shot(page, "05-resolve-form-validation")
    page.fill("#f-outcome", POST_MORTEM["outcome"])
    page.click("button:text('Resolve incident')")
    page.wait_for_url(lambda url: url.endswith(f"/incidents/{incident}#resolution"))
    page.locator("#memory-status.mem-synced").wait_for(timeout=60_000)
    assert page.locator("#resolution").get_by_text("ana,").is_visible()
    shot(page, "06-resolved-memory-synced")

    page.goto(f"{site.url}/profile")
    refresh = page.locator("button:text('Refresh now')")
    if refresh.count():  # else the worker's own refresh after the sync is already running
        refresh.click()
        page.locator("#refresh-status").wait_for()

    def profile_cites_it() -> bool:
        page.goto(f"{site.url}/profile")
        return page.locator(f"#patterns a.cite[href='/records/{incident}']").count() > 0

    wait_for(profile_cites_it, timeout=120, interval=1, what="the profile to show the new pattern")
    assert page.locator("svg.chart rect").count() > 0
    assert fits_width(page)
    shot(page, "07-profile")

    page.goto(f"{site.url}/memory?q=certificate+signed+by+unknown+authority")
    assert page.locator(f"#results a[href='/records/{incident}']").count() == 1
    shot(page, "08-memory-search")

    page.goto(f"{site.url}/incidents/{incident}/replay")
    assert page.get_by_role("heading", name="Memory on").is_visible()
    shot(page, "09-replay")
    page.context.close()


def test_an_engineer_drafts_the_resolve_form_from_notes(site: Site, browser: Browser) -> None:
    incident = site.post_alert(title="Orders queue backlog above 10k", service="orders-service")
    page = new_page(browser)
    sign_in(page, site, "ana", f"/incidents/{incident}/resolve")
    page.click("summary:text('Draft from my notes')")
    page.fill("#f-notes", "Root cause: consumer group stuck after a rebalance\nFix: restarted the consumers")
    page.click("button:text('Draft the empty fields from my notes')")
    page.wait_for_url(f"**/incidents/{incident}/resolve/draft")
    assert page.input_value("#f-root_cause") == "consumer group stuck after a rebalance"
    assert page.locator("#s-root_cause").inner_text() == "from your notes"
    assert page.locator("#s-outcome").inner_text() == "not in your notes"
    assert page.locator("#draft-warnings").get_by_text("Required field(s) still empty").is_visible()
    assert fits_width(page)
    shot(page, "05b-resolve-drafted-from-notes")
    page.context.close()


def test_a_viewer_reads_but_is_refused_the_resolve_action(site: Site, browser: Browser) -> None:
    incident = site.post_alert(title="Cart service 5xx above 5%", service="cart-service")
    page = new_page(browser)
    sign_in(page, site, "vic", f"/incidents/{incident}")
    assert page.get_by_text("Read only: viewers cannot acknowledge or resolve.").is_visible()
    assert page.locator("a:text('Resolve…')").count() == 0
    assert page.locator("button:text('Acknowledge')").count() == 0
    response = page.goto(f"{site.url}/incidents/{incident}/resolve")
    assert response is not None and response.status == 403
    assert page.get_by_text("Viewers can read incidents but not change them.").is_visible()
    shot(page, "10-viewer-refused")
    page.context.close()


def test_alert_markup_shows_as_text_and_never_runs(site: Site, browser: Browser) -> None:
    hostile = "<script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'>"
    incident = site.post_alert(title=hostile, service="search-service", description=hostile)
    page = new_page(browser)
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
    sign_in(page, site, "ana", f"/incidents/{incident}")
    assert page.locator("#signal strong").inner_text() == hostile
    assert page.evaluate("window.__pwned") is None
    page.goto(f"{site.url}/incidents")
    assert page.get_by_text(hostile).first.is_visible()
    assert page.evaluate("window.__pwned") is None
    shot(page, "11-markup-as-text")
    assert not [v for v in violations if "Content Security Policy" in v]  # nothing even tried to run
    page.context.close()


def test_pages_fit_a_phone_in_dark_mode(site: Site, browser: Browser) -> None:
    incident = site.post_alert(title="Inventory sync lagging by 20 minutes", service="inventory-service")
    page = new_page(browser, width=390, height=844, dark=True)
    sign_in(page, site, "ana")
    assert fits_width(page)
    shot(page, "12-phone-dark-list")
    page.goto(f"{site.url}/incidents/{incident}")
    page.locator("#related, #summary .muted").first.wait_for()
    assert fits_width(page)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(17, 20, 24)"  # the dark palette, from prefers-color-scheme
    shot(page, "13-phone-dark-incident")
    page.goto(f"{site.url}/profile")
    assert fits_width(page)
    shot(page, "14-phone-dark-profile")
    page.context.close()


def test_actions_are_reachable_by_keyboard(site: Site, browser: Browser) -> None:
    incident = site.post_alert(title="Search p95 above 800ms", service="search-service")
    page = new_page(browser)
    sign_in(page, site, "ana", f"/incidents/{incident}")
    reached = []
    for _ in range(20):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.textContent.trim()"))
        if reached[-1] == "Acknowledge":
            break
    assert reached[0] == "Skip to content"
    assert reached[-1] == "Acknowledge"
    page.keyboard.press("Enter")
    page.get_by_text("Acknowledged.").wait_for()
    assert page.locator("#incident-status").inner_text() == "acknowledged"
    shot(page, "15-acknowledged-by-keyboard")
    page.context.close()


# The demo's pool-exhaustion alert (the one `recallops demo` tells you to post).
DEMO_POOL_ALERT = {
    "title": "Checkout p99 latency over 2s",
    "description": "remaining connection slots are reserved; pool timeout acquiring connection",
    "alertname": "CheckoutPoolExhausted",  # its own incident, whatever the other tests left open
}


def test_the_demo_alert_briefing_head_is_short_and_says_nothing_twice(site: Site, browser: Browser) -> None:
    incident = site.post_alert(**DEMO_POOL_ALERT)
    for name, width, height in (
        ("16-briefing-head-desktop", 1280, 900),
        ("17-briefing-head-phone", 390, 844),
    ):
        page = new_page(browser, width=width, height=height)
        sign_in(page, site, "ana", f"/incidents/{incident}")
        page.locator("#head").wait_for(timeout=60_000)
        first_line = page.locator("#first-line").inner_text()
        # "Happened before" when the precedent recurs, "Closest precedent" when it is only similar (as
        # here once the module's earlier resolves add a second checkout precedent), "disagree" when the
        # nightly-import lookalike is about as close as the pool fault: each names an incident.
        lead = r"(Happened before|Closest precedent|The closest precedents disagree) on this service: INC-"
        assert re.match(lead, first_line), first_line
        assert "likely relevant" in first_line
        checks = page.locator("#head-checks li").all_inner_texts()
        fixes = page.locator("#head-fixes li").all_inner_texts()
        risky = page.locator("#head-risky li").all_inner_texts()
        assert 1 <= len(checks) <= 3 and 1 <= len(fixes) <= 3 and 1 <= len(risky) <= 3
        items = [" ".join(t.split()) for t in checks + fixes + risky]
        assert len(set(items)) == len(items)
        assert not any(t.startswith("Outcome then") for t in items)
        assert page.locator("#more").count() == 1 and not page.locator("#more").get_attribute("open")
        assert fits_width(page)
        shot(page, name)
        page.context.close()


def test_a_long_word_or_service_name_wraps_instead_of_widening_the_page(site: Site, browser: Browser) -> None:
    service = "payments-reconciliation-" * 5 + "exporter"
    incident = site.post_alert(
        title="Reconciliation export stalled", service=service, description="token=" + "x" * 300
    )
    for width in (1280, 375):
        page = new_page(browser, width=width)
        sign_in(page, site, "ana", f"/incidents/{incident}")
        assert fits_width(page), f"/incidents/{incident} at {width} px"
        page.goto(f"{site.url}/records/{incident}")
        assert fits_width(page), f"/records/{incident} at {width} px"
        shot(page, f"long-words-record-{width}")
        for path in ("/incidents", "/profile", "/memory"):  # the service filter lists the long name
            page.goto(f"{site.url}{path}")
            assert page.locator(f"option[value='{service}']").count() == 1
            assert fits_width(page), f"{path} at {width} px"
        page.context.close()


# As long as a channel's name may be (64), so the line naming it must wrap on a phone.
HELD_CHANNEL = "payments-reconciliation-oncall-slack-webhook-for-the-night-shift"


def test_a_viewer_on_a_phone_sees_which_channel_holds_the_briefing_and_until_when(
    browser: Browser, tmp_path: Path
) -> None:
    """Slack answers the briefing with a 429 and Retry-After: the page the viewer has open says, without
    a reload, that the channel asked to wait, until when, and what it answered."""
    slack = SlackReceiver().start()
    slack.fail_with((429, "600"))
    channels = [{"name": HELD_CHANNEL, "kind": "slack", "webhook_url": slack.webhook_url}]
    server = LiveServer(tmp_path / "data", env={"RECALLOPS_NOTIFY_CHANNELS": json.dumps(channels)})
    server.start()
    try:
        server.cli("user", "add", "vic", "--role", "viewer", "--password", PASSWORD)
        token = server.cli("token", "create", "--name", "alertmanager", "--scope", "alerts:write")
        held = Site(server, token.stdout.strip().splitlines()[-1])
        incident = held.post_alert(title="Payments reconciliation export stalled", service="payments")
        page = new_page(browser, width=375)
        sign_in(page, held, "vic", f"/incidents/{incident}")
        line = page.locator("#deliveries .delivery-held")
        line.wait_for()  # the briefing, its message and the 429 arrive while the page is open
        text = " ".join(line.inner_text().split())
        assert f"Slack incoming webhook ({HELD_CHANNEL}) asked to wait until" in text, text
        assert "(in 9 min)" in text or "(in 10 min)" in text, text
        assert ": 429 from Slack" in text and "nothing goes to it before then" in text, text
        assert fits_width(page)
        shot(page, "18-phone-delivery-held")
        page.context.close()
    finally:
        server.stop()
        slack.stop()
