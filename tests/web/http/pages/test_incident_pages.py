"""The incident list and page: what an engineer and a viewer see, the actions, and inert alert text."""

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from agent.briefing.head import build_head
from agent.core.schema import Briefing, Claim, EvidenceItem, RelatedIncident
from agent.core.similarity import Similarity
from incidents.auth.tokens import create_token
from incidents.briefings import service as briefing_service
from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.incident import service as incident_service
from incidents.resolution import service as resolution_service
from incidents.resolution.models import OutboxEntry, ResolutionFields
from tests.incidents.alerts.captures import capture
from tests.web.http.pages.conftest import Site

# What an engineer typed into the resolve form, before the fields each test varies.
TYPED = {"symptom": "slow checkout", "error_signature": "p99>2s", "outcome": "restored", "runbook_used": ""}


def _store_briefing(site: Site, public_id: str) -> None:
    briefing = Briefing(
        summary="Same pool exhaustion as INC-0042 [1].",
        likely_causes=[
            Claim(
                text="Root cause recorded for INC-0042: Connection pool exhausted by idle transactions [1]",
                citations=[1],
                statement="Connection pool exhausted by idle transactions",
            )
        ],
        first_checks=[Claim(text="Count idle-in-transaction sessions", citations=[2], action=True)],
        suggested_fix=[
            Claim(
                text="Kill idle sessions, then raise the pool timeout",
                citations=[1],
                role="fix",
                field="resolution_step",
                action=True,
            ),
            Claim(
                text="Outcome then (INC-0042): pool back in 6 minutes; 3,100 orders lost",
                citations=[1],
                role="fix",
                field="outcome",
            ),
        ],
        risky_actions=[
            Claim(text="Restarting the primary hurt", citations=[1], role="risky", field="failed_attempt")
        ],
        related_incidents=[RelatedIncident(id="INC-0042", service="checkout", score=0.91, why="same error")],
        seen_before="recurring",
        evidence=[
            EvidenceItem(
                n=1, kind="incident", id="INC-0042", service="checkout", title="Pool exhausted", text="..."
            ),
            EvidenceItem(n=2, kind="alert", title="This alert", text="..."),
        ],
        mode="evidence-only",
        memory="on",
        generated_at=datetime.now(UTC),
    )
    briefing.head = build_head(briefing, None, Similarity(None))
    with transaction(site.container.sessions) as db:
        incident = incident_service.get_by_public_id(db_session=db, public_id=public_id)
        assert incident is not None
        briefing_service.store_briefing(
            db_session=db,
            incident_id=incident.id,
            data=briefing.model_dump(mode="json"),
            mode="evidence-only",
            memory="on",
        )


def test_list_shows_open_incidents_first_and_filters(site: Site) -> None:
    site.signed_in()
    first = site.open_incident(summary="Payments error rate high", service="payments", alertname="Errors")
    second = site.open_incident(summary="Checkout latency", service="checkout")
    page = site.client.get("/incidents").text
    assert first in page and second in page
    assert page.index(second) < page.index(first)  # newest first among open ones
    filtered = site.client.get("/incidents", params={"service": "payments"}).text
    assert first in filtered and second not in filtered
    assert site.client.get("/incidents", params={"status": "resolved"}).text.count("INC-") == 0


def test_the_severity_filter_lists_every_incident_on_the_level(site: Site) -> None:
    """Critical means critical however the alerting system spelled it (p1, sev1, disaster); a severity
    no system is known to send is a choice of its own, matching only itself in any case; an old link naming a
    stored spelling filters by its level."""
    site.signed_in()
    opened = {
        severity: site.open_incident(
            summary=f"Down {severity}", fingerprint=f"fp-{severity}", alertname=f"Down{n}", severity=severity
        )
        for n, severity in enumerate(("critical", "p1", "sev1", "disaster", "warning", "sev-x"))
    }
    critical = {opened[s] for s in ("critical", "p1", "sev1", "disaster")}
    page = site.client.get("/incidents").text
    select = page[page.index('id="f-severity"') :]
    choices = re.findall(r'<option value="([^"]*)"', select[: select.index("</select>")])
    assert [c for c in choices if c] == ["critical", "warning", "sev-x"]  # most urgent first
    for asked in ("critical", "p1"):
        listed = site.client.get("/incidents", params={"severity": asked}).text
        assert {i for i in opened.values() if i in listed} == critical, asked
        assert '<option value="critical" selected>' in listed
        api = site.client.get("/api/v1/incidents", params={"severity": asked}).json()
        assert {i["id"] for i in api["items"]} == critical and api["total"] == 4, asked
    unknown = site.client.get("/api/v1/incidents", params={"severity": "sev-x"}).json()
    assert [i["id"] for i in unknown["items"]] == [opened["sev-x"]]
    listed = site.client.get("/incidents", params={"severity": "sev-x"}).text
    assert {i for i in opened.values() if i in listed} == {opened["sev-x"]}
    # Spelled otherwise by another sender, it is the same choice, and each spelling lists both.
    shouted = site.open_incident(
        summary="Down loudly", fingerprint="fp-SEV-X", alertname="Down9", severity="SEV-X"
    )
    page = site.client.get("/incidents").text
    select = page[page.index('id="f-severity"') :]
    choices = re.findall(r'<option value="([^"]*)"', select[: select.index("</select>")])
    assert [c.casefold() for c in choices if c] == ["critical", "warning", "sev-x"]
    for asked in ("sev-x", "SEV-X"):
        either = site.client.get("/api/v1/incidents", params={"severity": asked}).json()["items"]
        assert {i["id"] for i in either} == {opened["sev-x"], shouted}, asked


def test_list_tolerates_hand_edited_filters(site: Site) -> None:
    site.signed_in()
    response = site.client.get("/incidents", params={"status": "bogus", "age": "forever", "page": "-3"})
    assert response.status_code == 200


def test_incident_page_shows_the_signal_and_the_cited_briefing(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident(runbook_url="https://runbooks.local/latency")
    _store_briefing(site, public_id)
    page = site.client.get(f"/incidents/{public_id}").text
    assert "Checkout p99 latency above 2s" in page
    assert "env=prod" in page
    assert 'href="https://runbooks.local/latency"' in page
    assert 'href="/records/INC-0042"' in page  # a citation opens its record
    assert 'href="#signal"' in page
    assert "seen before" in page
    assert "Acknowledge" in page and "Resolve" in page
    head = page[page.index('id="head"') : page.index('id="more"')]  # the short head, then "more"
    assert "Count idle-in-transaction sessions" in head and "Restarting the primary hurt" in head
    assert "fix · resolution step" in head and "risky · failed attempt" in head  # role and field as values
    full = page[page.index('id="more"') :]
    assert 'data-role="fix"' in full and "fix · resolution step" in full


def test_engineer_acknowledges_and_the_timeline_says_who(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    response = site.post_form(f"/incidents/{public_id}/acknowledge", csrf_from=f"/incidents/{public_id}")
    assert response.status_code == 303
    page = site.client.get(f"/incidents/{public_id}").text
    assert "acknowledged by ana" in page
    assert ">Acknowledge</button>" not in page


def test_rerun_queues_a_briefing_job(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    assert site.post_form(f"/incidents/{public_id}/briefing").status_code == 303
    page = site.client.get(f"/incidents/{public_id}").text
    assert "Briefing in progress" in page
    assert "briefing re-run requested by ana" in page


def test_viewer_sees_no_actions_and_is_refused_them(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    public_id = site.open_incident()
    page = site.client.get(f"/incidents/{public_id}").text
    assert ">Acknowledge</button>" not in page
    assert "Resolve…" not in page
    response = site.post_form(f"/incidents/{public_id}/acknowledge")
    assert response.status_code == 403
    assert "Viewers can read incidents but not change them." in response.text


def test_forms_without_the_csrf_token_change_nothing(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    response = site.client.post(f"/incidents/{public_id}/acknowledge", data={"csrf_token": "x"})
    assert response.status_code == 403
    assert "triggered" in site.client.get(f"/incidents/{public_id}").text


def test_alert_markup_is_rendered_as_text(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident(
        summary="<script>alert('x')</script>",
        labels={"service": "checkout", "note": "<img src=x onerror=alert(1)>"},
        runbook_url="javascript:alert(1)",
    )
    page = site.client.get(f"/incidents/{public_id}").text
    assert "<script>alert(" not in page
    assert "&lt;script&gt;alert(" in page
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
    listing = site.client.get("/incidents").text
    assert "<script>alert(" not in listing


def test_unknown_incident_is_a_404_page(site: Site) -> None:
    site.signed_in()
    response = site.client.get("/incidents/INC-9999")
    assert response.status_code == 404
    assert "There is no incident INC-9999." in response.text


def test_an_address_nothing_serves_is_the_sites_404_page_to_a_browser_and_json_to_the_api(site: Site) -> None:
    site.signed_in()
    page = site.client.get("/nope", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 404 and "There is no page at /nope." in page.text
    api = site.client.get("/api/v1/nope", headers={"Accept": "text/html"})
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    assert site.client.get("/nope").json() == {"detail": "Not Found"}


def test_resolve_form_is_prefilled_from_the_alert_and_the_briefing(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident(runbook_url="https://runbooks.local/latency")
    _store_briefing(site, public_id)
    page = site.client.get(f"/incidents/{public_id}/resolve").text
    assert "Checkout p99 latency above 2s. p99 above threshold for 5 minutes" in page
    assert "HighLatency{env=prod, service=checkout}" in page
    mark = "Unconfirmed, drafted from the briefing: "
    assert (
        f"{mark}Connection pool exhausted by idle transactions</textarea>" in page
    )  # the cause as stated: no lead naming another incident, no citation marker
    assert f"{mark}1. Kill idle sessions, then raise the pool timeout" in page
    assert "3,100 orders lost" not in page  # the precedent's outcome is not a step this incident took
    assert 'value="https://runbooks.local/latency"' in page


def test_a_suggestion_submitted_as_drafted_is_refused_until_confirmed(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    _store_briefing(site, public_id)
    page = site.client.get(f"/incidents/{public_id}/resolve").text
    found = re.search(r'name="root_cause"[^>]*>([^<]*)</textarea>', page)
    assert found is not None
    drafted = html.unescape(found.group(1))
    data = {**TYPED, "root_cause": drafted, "resolution_steps": "killed idle sessions"}
    refused = site.resolve_form(public_id, data)
    assert refused.status_code == 422 and "still the briefing&#39;s suggestion" in refused.text
    assert "triggered" in site.client.get(f"/incidents/{public_id}").text
    confirmed = drafted.removeprefix("Unconfirmed, drafted from the briefing: ")
    assert site.resolve_form(public_id, {**data, "root_cause": confirmed}).status_code == 303


def test_resolve_names_each_invalid_field_and_keeps_what_was_typed(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    data = {**TYPED, "root_cause": "   ", "resolution_steps": "", "failed_attempts": ""}
    response = site.resolve_form(public_id, data)
    assert response.status_code == 422
    assert 'id="e-root_cause" aria-live="polite">must not be blank' in response.text
    assert 'id="e-resolution_steps" aria-live="polite">must not be blank' in response.text
    assert "slow checkout</textarea>" in response.text
    assert "triggered" in site.client.get(f"/incidents/{public_id}").text


def test_resolve_saves_the_signed_in_engineer_and_queues_memory(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    data = {
        **TYPED,
        "root_cause": "pool exhausted",
        "resolution_steps": "killed idle sessions",
        "failed_attempts": "restarting pods did not help",
        "resolved_by": "mallory",
    }
    response = site.resolve_form(public_id, data)
    assert response.status_code == 303
    page = site.client.get(f"/incidents/{public_id}").text
    assert "Resolved by ana" in page and "mallory" not in page
    assert "memory: pending" in page
    assert site.client.get(f"/incidents/{public_id}/resolve", follow_redirects=False).status_code == 303


RESOLVED = {**TYPED, "root_cause": "pool exhausted", "resolution_steps": "killed idle sessions"}
INCIDENT_LINK = re.compile(r'<a href="/incidents/(INC-\d+)" id="error-link">Open \1</a>')


def _resolved_by_bob(site: Site, public_id: str) -> None:
    with transaction(site.container.sessions) as db:
        incident = incident_service.get_by_public_id(db_session=db, public_id=public_id)
        assert incident is not None
        fields = ResolutionFields(**{**RESOLVED, "root_cause": "bob's cause"})
        resolution_service.resolve(db_session=db, incident=incident, fields=fields, actor="bob")


@pytest.mark.parametrize("root_cause", ["pool exhausted", ""], ids=["complete", "with a blank field"])
def test_a_resolve_form_sent_after_someone_resolved_the_incident_says_so_and_links_to_it(
    site: Site, root_cause: str
) -> None:
    site.signed_in()
    public_id = site.open_incident()
    token = site.csrf(f"/incidents/{public_id}/resolve")
    _resolved_by_bob(site, public_id)
    response = site.client.post(
        f"/incidents/{public_id}/resolve", data={"csrf_token": token, **RESOLVED, "root_cause": root_cause}
    )
    assert response.status_code == 409 and "<h1>Already resolved</h1>" in response.text
    assert f"{public_id} was resolved by bob at " in response.text
    assert "so the post-mortem in it was not saved" in response.text
    assert INCIDENT_LINK.findall(response.text) == [public_id]


def test_a_resolve_form_sent_twice_says_it_was_saved_already(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    assert site.resolve_form(public_id, RESOLVED).status_code == 303
    again = site.post_form(f"/incidents/{public_id}/resolve", RESOLVED)
    assert again.status_code == 303
    page = site.client.get(again.headers["location"]).text
    assert "This post-mortem was saved already (the form was sent twice); nothing changed." in page


def test_acknowledging_a_resolved_incident_is_refused_with_a_link_to_it(site: Site) -> None:
    site.signed_in()
    public_id = site.open_incident()
    _resolved_by_bob(site, public_id)
    response = site.post_form(f"/incidents/{public_id}/acknowledge")
    assert response.status_code == 409 and "<h1>Cannot acknowledge</h1>" in response.text
    assert INCIDENT_LINK.findall(response.text) == [public_id]


def test_viewer_cannot_open_or_submit_the_resolve_form(site: Site) -> None:
    site.signed_in("vic", role="viewer")
    public_id = site.open_incident()
    assert site.client.get(f"/incidents/{public_id}/resolve").status_code == 403
    data = {
        "symptom": "x",
        "error_signature": "x",
        "root_cause": "x",
        "resolution_steps": "x",
        "outcome": "x",
    }
    assert site.post_form(f"/incidents/{public_id}/resolve", data).status_code == 403
    assert "triggered" in site.client.get(f"/incidents/{public_id}").text


def test_a_viewer_checks_a_move_in_the_box_and_the_timeline_records_it(site: Site) -> None:
    site.seed()
    site.signed_in("vic", role="viewer")
    public_id = site.open_incident()
    page = site.client.get(f"/incidents/{public_id}").text
    assert "About to do something? Check it against memory" in page
    response = site.post_form(
        f"/incidents/{public_id}/check-action",
        {"action": "update the status page"},
        csrf_from=f"/incidents/{public_id}",
    )
    assert response.status_code == 303 and response.headers["location"].endswith("#check")
    page = site.client.get(f"/incidents/{public_id}").text
    assert 'id="check-verdict"' in page and "no record" in page
    assert "checked &#39;update the status page&#39; against memory: no record" in page
    assert 'id="check-verdict"' not in site.client.get(f"/incidents/{public_id}").text  # shown once


def test_the_page_checks_every_second_while_its_briefing_is_made_then_less_often(site: Site) -> None:
    """README promises the briefing on the page within a second of the alert: it is stored in tens of
    milliseconds, so the page's own check is what takes time."""
    site.signed_in()
    public_id = site.open_incident()
    assert '<div id="incident-live" data-refresh="1">' in site.client.get(f"/incidents/{public_id}").text
    with transaction(site.container.sessions) as db:
        db.execute(update(Job).values(state="done"))
    assert site.resolve_form(public_id, RESOLVED).status_code == 303
    assert '<div id="incident-live" data-refresh="2">' in site.client.get(f"/incidents/{public_id}").text


def test_a_failing_memory_write_already_due_says_its_next_try_is_due_not_minutes_ago(site: Site) -> None:
    """The outbox row waits for a worker to claim it: its next try is due, as a chat delivery's says."""
    site.signed_in()
    public_id = site.open_incident()
    assert site.resolve_form(public_id, RESOLVED).status_code == 303
    with transaction(site.container.sessions) as db:
        db.execute(
            update(OutboxEntry).values(
                state="failing",
                attempts=2,
                last_error="connection refused",
                next_attempt_at=datetime.now(UTC) - timedelta(minutes=3),
            )
        )
    page = site.client.get(f"/incidents/{public_id}").text
    assert "attempt 2 failed: connection refused; next try due now." in page
    assert "next try 3 min ago" not in page


@pytest.mark.parametrize(
    ("severity", "level"),
    [
        ("p1", "critical"),
        ("sev-2", "high"),
        ("ticket", "warning"),
        ("not classified", "none"),
        ("sev-x", "unknown"),
    ],
)
def test_a_severity_is_shown_as_sent_and_coloured_by_its_level(site: Site, severity: str, level: str) -> None:
    """The engineer reads what the alerting system said (P1, not critical); the badge's colour says how
    urgent it is. A severity no system is known to send is shown as plainly, on the page, the list, the
    timeline and the API."""
    site.signed_in()
    public_id = site.open_incident(severity=severity)
    badge = f'<span class="badge sev-{level}">{severity}</span>'
    page = site.client.get(f"/incidents/{public_id}")
    assert page.status_code == 200 and badge in page.text
    assert badge in site.client.get("/incidents").text
    offered = severity if level == "unknown" else level  # the severity filter offers its level
    assert f">{offered}</option>" in site.client.get("/incidents").text
    incident = site.client.get(f"/api/v1/incidents/{public_id}")
    assert incident.status_code == 200
    assert incident.json()["severity"] == severity and [a["severity"] for a in incident.json()["alerts"]] == [
        severity
    ]
    assert [event["kind"] for event in incident.json()["timeline"]] == ["opened"]


def test_an_alert_sent_as_p1_is_shown_as_p1_and_still_ranks_as_critical(site: Site) -> None:
    """Intake keeps the alert's own spelling, trimmed: the page, the list and the API say ``P1``, the
    filter still lists it under critical, and a later severity is compared on the ladder whatever its
    case (``sev3`` re-sent as ``SEV1`` escalates; ``p1`` after ``P1`` is a repeat)."""
    site.signed_in()
    with transaction(site.container.sessions) as db:
        sender = create_token(db_session=db, name="am", scopes=["alerts:write"]).secret
    raw = capture("alertmanager", "amtool-1-firing")
    raw["alerts"] = [{**raw["alerts"][0], "labels": {"alertname": "CheckoutDown", "severity": " P1 "}}]
    bearer = {"Authorization": f"Bearer {sender}"}
    sent = site.client.post("/api/v1/alerts/alertmanager", json=raw, headers=bearer).json()
    [public_id] = sent["incidents"]
    assert sent["alerts"][0]["severity"] == "P1"
    badge = '<span class="badge sev-critical">P1</span>'
    assert badge in site.client.get(f"/incidents/{public_id}").text
    assert badge in site.client.get("/incidents", params={"severity": "critical"}).text
    incident = site.client.get(f"/api/v1/incidents/{public_id}").json()
    assert (incident["severity"], [a["severity"] for a in incident["alerts"]]) == ("P1", ["P1"])
    for asked in ("critical", "p1", "P1"):
        listed = site.client.get("/api/v1/incidents", params={"severity": asked}).json()["items"]
        assert [i["id"] for i in listed] == [public_id], asked

    def generic(severity: str) -> dict[str, object]:
        alert = {"title": "Queue depth high", "service": "payments", "severity": severity}
        [answer] = site.client.post("/api/v1/alerts", json=alert, headers=bearer).json()["alerts"]
        return dict(answer)

    opened = generic("sev3")
    raised = generic("SEV1")
    assert (raised["outcome"], raised["previous_severity"], raised["severity"]) == (
        "escalated",
        "sev3",
        "SEV1",
    )
    assert generic("sev1")["outcome"] == "duplicate"
    assert site.client.get(f"/api/v1/incidents/{opened['incident']}").json()["severity"] == "SEV1"
