"""Free-form history from files to recall, with a person in between: ``recallops import`` on a fresh
data dir, then the drafts reviewed and accepted on the review page in headless Chromium, then the
accepted incidents recalled, their record pages linking to their source."""

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.e2e.test_pages_browser import Site, browser, fits_width, new_page, shot, sign_in
from tests.support.net import wait_for
from tests.support.server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
__all__ = ["browser"]

FILES = Path(__file__).parents[1] / "memory" / "extraction" / "files"
PASSWORD = "correct horse battery staple"
COMPLETE = ("checkout-db-failover.md", "confluence-cache-eviction.html")
THIN = "# Search outage, 22 January 2026\n\nSearch was slow for an hour.\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("review")
    folder = root / "postmortems"
    folder.mkdir()
    for name in COMPLETE:
        shutil.copy(FILES / name, folder / name)
    (folder / "search-outage.md").write_text(THIN)
    server = LiveServer(root / "data")
    imported = server.cli("import", str(folder), "--by", "dana")
    assert "files read 3, documents 3, new drafts 3" in imported.stdout
    server.start()
    try:
        server.cli("user", "add", "ana", "--role", "engineer", "--password", PASSWORD)
        yield Site(server, "")
    finally:
        server.stop()


def test_drafts_accepted_on_the_review_page_are_recalled_and_link_to_their_source(
    site: Site, browser: Browser
) -> None:
    page = new_page(browser)
    sign_in(page, site, "ana", "/review")
    rows = page.locator("#drafts tbody tr")
    assert rows.count() == 3
    assert re.search(r"\t\d+%\t", rows.filter(has_text="checkout-db-failover.md").inner_text())  # fill rate
    assert "root_cause" in rows.filter(has_text="search-outage.md").inner_text()  # missing, named
    shot(page, "review-01-queue")

    page.click("a:text-is('postmortems/checkout-db-failover.md')")
    source = page.locator("#source-text")
    assert "The orders primary was failed over" in source.inner_text()
    link = page.locator("label[for=f-root_cause] a").first
    anchor = link.get_attribute("href")
    assert anchor is not None and anchor.startswith("#src-root_cause-")
    link.click()
    assert page.locator(f"mark{anchor}").inner_text().startswith("The orders primary was failed over")
    assert page.input_value("#f-service") == "checkout-api"
    shot(page, "review-02-draft-beside-its-source")
    page.click("#accept")
    page.wait_for_url("**/records/checkout-db-failover-*")
    record_url = page.url
    assert "Accepted as checkout-db-failover-" in page.locator(".flash").inner_text()
    assert page.locator("#record-source").inner_text() == "postmortems/checkout-db-failover.md"

    page.goto(f"{site.url}/review")
    page.click("a:text-is('postmortems/search-outage.md')")
    page.click("#accept")
    assert "Not accepted" in page.locator(".flash").inner_text()  # required fields are missing
    page.fill("#f-service", "search-api")
    page.fill("#f-symptom", "Search results took 8 to 12 seconds for an hour.")
    page.fill("#f-error_signature", "circuit_breaking_exception: [parent] Data too large")
    page.fill("#f-root_cause", "A faceted query loaded the brand field into the fielddata cache.")
    page.fill("#f-resolution_steps", "Turned the query off with its flag and cleared the fielddata cache.")
    page.fill("#f-outcome", "Latency back under 300 ms.")
    page.click("#accept")
    page.wait_for_url("**/records/search-outage-*")

    page.goto(f"{site.url}/review")
    page.click("a:text-is('postmortems/confluence-cache-eviction.html')")
    page.fill("#f-reason", "Already written up as an incident here")
    page.click("#reject")
    page.wait_for_url("**/review")
    page.goto(f"{site.url}/review?state=all")
    shot(page, "review-03-decided")
    assert page.locator("#drafts tbody tr").filter(has_text="rejected").count() == 1

    page.goto(record_url)
    wait_for(
        lambda: page.reload() or "memory: synced" in page.locator("#memory-status").inner_text(),
        timeout=60,
        what="the accepted record synced to memory",
    )
    page.click("#record-source")
    assert "The orders primary was failed over" in page.locator("#source-text").inner_text()
    assert "accepted" in page.locator("#draft-state").inner_text()

    public_id = record_url.rsplit("/", 1)[1]
    asked = site.server.cli(
        "ask", "checkout-api 503s, psycopg server closed the connection unexpectedly", "--json"
    )
    assert public_id in asked.stdout


def test_a_revisions_page_compares_the_record_with_the_revision_on_a_phone(
    site: Site, browser: Browser, tmp_path: Path
) -> None:
    folder = tmp_path / "revisions"
    folder.mkdir()
    text = (FILES / "checkout-db-failover.md").read_text().replace("18%", "a fifth")
    (folder / "failover.md").write_text(text)
    site.server.cli("import", str(folder), "--by", "dana")
    page = new_page(browser)
    sign_in(page, site, "ana", "/review")
    page.click("a:text-is('revisions/failover.md')")
    page.click("#accept")
    page.wait_for_url("**/records/*")
    (folder / "failover.md").write_text(text.replace("health check was disabled", "health check was off"))
    site.server.cli("import", str(folder), "--by", "dana")
    page.goto(f"{site.url}/review")
    page.click("a:text-is('revisions/failover.md')")
    draft_url = page.url
    page.context.close()

    for width in (1280, 375):
        page = new_page(browser, width=width)
        sign_in(page, site, "ana", draft_url.removeprefix(site.url))
        compared = page.locator("#revision-compare")
        assert "1 of 8 post-mortem fields change." in compared.inner_text()
        root = page.locator("#compare-root_cause")
        assert "changed" in root.locator(".badge").inner_text()
        assert "was disabled" in root.locator("dd").first.inner_text()
        assert "was off" in root.locator("dd").last.inner_text()
        assert page.locator("#compare-outcome .badge").inner_text() == "unchanged"
        assert fits_width(page), f"the revision's draft page at {width} px"
        shot(page, f"review-04-revision-compared-{width}")
        page.context.close()
