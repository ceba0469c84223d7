"""Record, memory search, profile and replay pages over a bank holding part of the demo history."""

import html
import re

import pytest

from memory.service import MemoryUnavailable
from tests.support.net import wait_for
from tests.web.http.pages.conftest import Site
from web.app.history import import_history, load_seeds


def test_record_page_shows_the_labeled_record_of_a_remembered_incident(site: Site) -> None:
    site.signed_in()
    first = site.seed(2)[0]
    page = site.client.get(f"/records/{first}").text
    assert f"INCIDENT {first} — " in page  # the labeled template, as memory holds it
    assert "Root cause" in page and "seeded history" in page


def test_record_page_shows_what_a_replaced_history_record_said_before(site: Site) -> None:
    site.signed_in()
    first = site.seed(1)[0]
    container = site.container
    [(line, row)] = load_seeds().rows[:1]
    before = row.record().root_cause
    changed = row.model_copy(update={"root_cause": "A certificate expired on the payment gateway."})

    async def replace() -> None:
        await import_history(
            sessions=container.sessions,
            bank=container.bank,
            rows=[(line, changed)],
            origin="import",
            actor="historian",
            replace=True,
        )

    site.client.portal.call(replace)  # type: ignore[union-attr]
    page = site.client.get(f"/records/{first}").text
    assert "Replaced versions" in page and "historian" in page
    assert html.escape(before) in page and "A certificate expired on the payment gateway." in page


def test_unknown_record_is_a_404_page(site: Site) -> None:
    site.signed_in()
    response = site.client.get("/records/INC-NOPE-1")
    assert response.status_code == 404
    assert "Neither this service nor its memory knows INC-NOPE-1." in response.text


def test_engineer_adds_a_correction_and_viewer_gets_no_form(site: Site) -> None:
    site.add_user("ana")
    site.add_user("vic", role="viewer")
    first = site.seed(1)[0]
    site.sign_in("ana")
    text = "The pool size was not the cause: idle-in-transaction sessions were"
    response = site.post_form(f"/records/{first}/corrections", {"text": text}, csrf_from=f"/records/{first}")
    assert response.status_code == 303
    page = site.client.get(f"/records/{first}").text
    assert text in page and "Corrections" in page
    site.post_form("/signout")
    site.sign_in("vic")
    page = site.client.get(f"/records/{first}").text
    assert "Add a correction" not in page
    assert site.post_form(f"/records/{first}/corrections", {"text": "x"}).status_code == 403


def test_memory_search_shows_scores_likelihood_and_why_and_escapes_the_query(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    site.seed(8)
    page = site.client.get("/memory", params={"q": "connection pool timeout <script>x</script>"}).text
    assert "<script>x</script>" not in page
    assert re.search(r"score \d\.\d{3}", page)
    # Each hit says how likely it is a relevant precedent, as a briefing would.
    likely = re.findall(r"(\d+)% likely relevant \((strong|moderate|weak)\)", page)
    assert likely and len(likely) == len(re.findall(r'<article class="result">', page))
    assert "Why: ranked 1st by" in page
    assert 'href="/records/' in page
    assert "<mark>" in page


def test_memory_search_by_service_only_returns_that_service(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    site.seed(8)
    page = site.client.get("/memory", params={"q": "timeout errors", "service": "checkout-service"}).text
    services = set(
        re.findall(r'<span class="muted">([a-z-]+)</span>\s*<span class="badge badge-plain score"', page)
    )
    assert services == {"checkout-service"}


def test_profile_refresh_is_followed_to_completion_and_shows_patterns(site: Site) -> None:
    site.signed_in()
    site.seed(8)
    page = site.client.get("/profile").text
    assert "Last refreshed" in page
    assert '<svg class="chart"' in page  # incidents per service, drawn on the server
    response = site.post_form("/profile/refresh", {"service": ""}, csrf_from="/profile")
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/profile?operation=")
    done = wait_for(
        lambda: (text := site.client.get(location).text) and "refresh completed" in text and text,
        timeout=60,
        what="the profile refresh to complete",
    )
    assert "failure pattern" in done
    assert re.search(r'id="pattern-[^"]+"', done)
    assert 'class="cite" href="/records/' in done


def test_viewer_has_no_refresh_button_and_cannot_refresh(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    assert "Refresh now" not in site.client.get("/profile").text
    assert site.post_form("/profile/refresh", {"service": ""}, csrf_from="/profile").status_code == 403


def _replayed_pool_timeout(site: Site) -> tuple[str, str]:
    """A pool timeout on the seeded history, and its replay page."""
    site.seed(8)
    public_id = site.open_incident(
        summary="Checkout requests time out; HikariPool-1 connection is not available",
        service="checkout-service",
        description="request timed out after 30000ms",
    )
    return public_id, site.client.get(f"/incidents/{public_id}/replay").text


def test_replay_shows_what_memory_added(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    _, page = _replayed_pool_timeout(site)
    assert "Memory off" in page and "Memory on" in page
    assert "Memory changed this briefing." in page
    assert 'class="diff-added"' in page


def test_every_citation_on_the_replay_page_points_at_something_there_or_on_another_page(site: Site) -> None:
    site.signed_in()
    public_id, page = _replayed_pool_timeout(site)
    targets = set(re.findall(r'class="cite" href="([^"]+)"', page))
    assert f"/incidents/{public_id}#signal" in targets  # the alert, on the page that shows it
    in_page = {t.removeprefix("#") for t in targets if t.startswith("#")}
    assert in_page <= set(re.findall(r' id="([^"]+)"', page))
    assert {t for t in targets if not t.startswith(("#", "/records/", "/profile"))} == {
        f"/incidents/{public_id}#signal"
    }


def test_a_pattern_with_regular_dates_shows_its_period_and_next_date(site: Site) -> None:
    """Two expired certificates 90 days apart: the profile says when the third is due, with a chart."""
    from memory.service import HistoryRow
    from web.app.history import import_history

    site.signed_in()
    rows = [
        HistoryRow(
            incident_id=ident,
            service="api-gateway",
            timestamp=stamp,
            symptom="Mobile clients fail TLS handshakes",
            error_signature="x509: certificate has expired or is not yet valid",
            root_cause="The mobile listener's certificate was issued by hand and expired unrenewed",
            resolution_steps="1. Issued a new certificate",
            outcome="Handshakes recovered",
        )
        for ident, stamp in (("INC-C1", "2026-01-10T03:00:00Z"), ("INC-C2", "2026-04-10T03:00:00Z"))
    ]
    container = site.container

    async def run() -> None:
        await import_history(
            sessions=container.sessions,
            bank=container.bank,
            rows=list(enumerate(rows, 1)),
            origin="import",
            actor="t",
        )

    site.client.portal.call(run)  # type: ignore[union-attr]
    location = site.post_form("/profile/refresh", {"service": ""}, csrf_from="/profile").headers["location"]
    done = wait_for(
        lambda: (text := site.client.get(location).text) and "refresh completed" in text and text,
        timeout=60,
        what="the profile refresh to complete",
    )
    assert "recurs about every 90 days; the last was 2026-04-10" in done
    assert "the next was due around 2026-07-09" in done  # the dates are in the past
    assert '<svg class="chart strip"' in done and "next due around 2026-07-09" in done


def test_the_profile_of_a_service_no_incident_is_on_is_a_404_naming_it(site: Site) -> None:
    site.signed_in()
    site.seed(8)
    page = site.client.get("/profile", params={"service": "chekout-service"})
    assert page.status_code == 404 and "chekout-service" in page.text and "checkout-service" in page.text
    refresh = site.post_form("/profile/refresh", {"service": "chekout-service"}, csrf_from="/profile")
    assert refresh.status_code == 404
    assert site.client.get("/profile", params={"service": "checkout-service"}).status_code == 200


def test_replay_while_memory_cannot_be_reached_says_so_not_that_nothing_matched(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.signed_in("vic", role="viewer")
    site.seed(8)
    public_id = site.open_incident(summary="Checkout requests time out", service="checkout-service")

    async def unreachable(*_: object, **__: object) -> None:
        raise MemoryUnavailable("connection refused")

    monkeypatch.setattr(site.container.bank, "recall", unreachable)
    page = site.client.get(f"/incidents/{public_id}/replay").text
    assert "Memory could not be reached" in page and "connection refused" in page
    assert "Memory made no difference here" not in page
