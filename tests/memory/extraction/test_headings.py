"""Headed post-mortems: Markdown, bold labels, upper-case sections, inline labels."""

from memory.extraction.document import from_text
from memory.extraction.extract import extract
from memory.extraction.headings import field_of, fields_of
from memory.template import FIELDS

MARKDOWN = """# Checkout API outage — 2024-03-14

Service: checkout-api

## What happened

Between 09:12 and 09:47 UTC, p99 latency on /checkout rose above 4 s and
about 12% of orders failed with HTTP 503.

## Detection

PagerDuty paged the on-call engineer on the `CheckoutLatencyHigh` alert.

## Root cause

A config push lowered the database connection pool from 50 to 5 connections.

## Contributing factors

- the canary stage checked error rate only, not latency
- the pool size has no alert

## Resolution

1. Rolled back the config push (09:31).
2. Restarted the checkout pods to pick up the old pool size.

## What went wrong

Restarting the database first made it worse: every pod reconnected at once.

## Action items

- [ ] Alert on pool saturation (owner: dana)

Runbook: https://wiki.example.org/runbooks/checkout-latency
Resolution kind: fixed
"""


def test_markdown_headings_fill_their_fields() -> None:
    extraction = extract(from_text("checkout.md", MARKDOWN, "markdown"))
    assert extraction["symptom"].value.startswith(
        "Between 09:12 and 09:47 UTC, p99 latency on /checkout rose"
    )
    assert "CheckoutLatencyHigh" in extraction["symptom"].value
    assert extraction["root_cause"].value.splitlines() == [
        "A config push lowered the database connection pool from 50 to 5 connections.",
        "- the canary stage checked error rate only, not latency",
        "- the pool size has no alert",
    ]
    assert extraction["resolution_steps"].value.splitlines() == [
        "1. Rolled back the config push (09:31).",
        "2. Restarted the checkout pods to pick up the old pool size.",
    ]
    assert extraction["failed_attempts"].value.startswith("Restarting the database first made it worse")
    assert extraction["outcome"].value == "- Alert on pool saturation (owner: dana)"  # the task box dropped
    assert extraction["runbook_used"].value == "https://wiki.example.org/runbooks/checkout-latency"
    assert extraction["resolution_kind"].value == "fixed"
    assert extraction["timestamp"].value == "2024-03-14"
    assert extraction.service.value == "checkout-api"
    assert extraction.title.value == "Checkout API outage — 2024-03-14"
    assert extraction["error_signature"].value == "HTTP 503"  # no heading: the phrases of the prose
    assert extraction.missing == ()


def test_every_value_is_built_from_its_spans() -> None:
    extraction = extract(from_text("checkout.md", MARKDOWN, "markdown"))
    for name, field in extraction.fields.items():
        for span in field.spans:
            assert 0 <= span.start < span.end <= len(MARKDOWN), name
    root = extraction["root_cause"]
    assert MARKDOWN[root.spans[0].start : root.spans[0].end].startswith("A config push lowered")


def test_status_page_sections_in_capitals_and_repeated_updates_count_once() -> None:
    page = (
        "ISSUE SUMMARY\n\nOn Tuesday, 14 February 2017, some applications saw 4% errors.\n\n"
        "ROOT CAUSE\n\nA latent bug in a shared service was triggered by high load.\n\n"
        "REMEDIATION AND PREVENTION\n\nEngineers redirected traffic to other zones.\n\n"
        "| Feb 14, 2017 | 14:53 |\n\n"
        "ROOT CAUSE\n\nA latent bug in a shared service was triggered by high load.\n"
    )
    extraction = extract(from_text("page.txt", page))
    assert extraction["root_cause"].value == "A latent bug in a shared service was triggered by high load."
    assert extraction["resolution_steps"].value == "Engineers redirected traffic to other zones."
    assert len(extraction["root_cause"].spans) == 1


def test_a_field_nothing_supports_is_left_empty() -> None:
    extraction = extract(from_text("notes.txt", "Lunch menu\n\nSoup of the day: lentils.\n"))
    assert all(not f.value and not f.spans for n, f in extraction.fields.items() if n != "timestamp")
    assert extraction.fill_rate == 0.0
    assert set(extraction.missing) == {f.name for f in FIELDS if f.required}


def test_meta_values_are_taken_as_given() -> None:
    meta = {"service": "payments", "started_at": "2024-05-01T10:00:00Z", "title": "Card auth errors"}
    extraction = extract(from_text("pd.json", "Root cause: expired TLS certificate.", "pagerduty", meta))
    assert extraction.service.value == "payments" and extraction.service.origin == "meta"
    assert extraction["timestamp"].value == "2024-05-01T10:00:00Z"
    assert extraction["root_cause"].value == "expired TLS certificate."


def test_headings_name_fields_by_the_template_words() -> None:
    assert field_of("Root cause and remediation") == "root_cause"
    assert field_of("DETAILED DESCRIPTION OF IMPACT") == "symptom"
    assert field_of("Resolution kind") == "resolution_kind"
    assert field_of("Next steps") == "outcome"
    assert field_of("Summary of the AWS Service Event in the US East Region") is None


def test_a_heading_naming_two_fields_gives_each_the_sentences_its_cues_say_are_its_own() -> None:
    assert fields_of("Root cause and remediation") == ("root_cause", "resolution_steps")
    assert fields_of("Timeline and root cause") == ()
    text = (
        "# Order writes failing\n\n"
        "## Root cause and remediation\n\n"
        "The data volume filled because the WAL archiver had failed since a credentials rotation. "
        "We restored the archiver's credentials and grew the volume by 200 GB. "
        "Restarting the pods did not help.\n"
    )
    fields = extract(from_text("orders.md", text, "markdown"))
    assert fields["root_cause"].value.startswith("The data volume filled")
    assert "restored" not in fields["root_cause"].value
    assert fields["resolution_steps"].value.startswith("We restored the archiver's credentials")
    assert fields["failed_attempts"].value == "Restarting the pods did not help."


def test_a_section_longer_than_its_field_keeps_its_leading_paragraphs_within_the_limit() -> None:
    paragraph = "The pool drained because " + "every retry opened a connection " * 40
    text = "## Root cause\n\n" + "\n\n".join(f"{n}. {paragraph}" for n in range(40)) + "\n"
    root = extract(from_text("long.md", text, "markdown"))["root_cause"]
    limit = next(f.max_length for f in FIELDS if f.name == "root_cause")
    assert limit is not None and 0 < len(root.value) <= limit
    assert root.value.startswith("0. The pool drained")
    assert len(root.spans) < 40 and root.spans == tuple(sorted(root.spans))


def test_one_huge_paragraph_is_cut_to_the_limit_at_its_start() -> None:
    text = "Error signature:\n\n" + "timeout " * 2_000
    field = extract(from_text("big.txt", text))["error_signature"]
    limit = next(f.max_length for f in FIELDS if f.name == "error_signature")
    assert limit is not None and limit - 20 < len(field.value) <= limit
    assert field.value.startswith("timeout timeout")


def test_a_short_value_alone_under_its_heading_is_the_value_not_a_heading() -> None:
    text = (
        "# Orders database outage\n\nService: orders-db\n\n## Symptom\n\nWrites failing on orders.\n\n"
        "## Error signature\n\nNo space left on device\n\n## Root cause\n\nDisk full on db-7\n\n"
        "## Resolution\n\n1. Grew the volume.\n\n## Outcome\n\nFixed\n\nOperational Notes\n\n"
        "Paged twice.\n"
    )
    extraction = extract(from_text("orders.md", text, "markdown"))
    assert extraction["error_signature"].value == "No space left on device"
    assert extraction["root_cause"].value == "Disk full on db-7"
    # The line alone after a field's value still opens a section of its own.
    assert extraction["outcome"].value == "Fixed"


def test_a_timeline_is_not_the_resolution_steps() -> None:
    text = """# Search outage

## Timeline
- 10:03 alert fired: SearchErrorRateHigh
- 10:15 restarted the search pods, which did not help

## Resolution
Raised maxmemory to 8 GB and moved the reindex to a separate cache.
"""
    found = extract(from_text("search.md", text))
    assert (
        found["resolution_steps"].value
        == "Raised maxmemory to 8 GB and moved the reindex to a separate cache."
    )
    assert field_of("Timeline") is None


def test_a_timeline_lessons_and_what_went_well_are_no_field_by_heading_or_by_cue() -> None:
    text = """# Gateway 504s after a route reload

## Timeline (UTC)
1. 21:02 - alert fired: 504 rate 35%
2. 21:06 - on-call restarts the envoy pods; 504s continue
3. 21:20 - reverted the route config, errors back to normal

## Root cause
A route config reload dropped the upstream cluster for orders.

## Lessons learned
We restarted things before reading what changed in the config.

## What went well
The rollback of the route config was quick once we found it.

## Steps to reproduce
1. Reload the route config with the orders cluster missing.
"""
    found = extract(from_text("gateway.md", text))
    assert found["root_cause"].value.startswith("A route config reload dropped")
    assert not found["resolution_steps"].filled and "resolution_steps" in found.missing
    assert found.title.value == "Gateway 504s after a route reload"
    assert field_of("Steps to reproduce") is None and field_of("Timeline (UTC)") is None


def test_a_service_in_a_table_row_is_the_service() -> None:
    text = "# Partner API outage\n\n| Field | Value |\n|---|---|\n| Service | partner-api |\n"
    assert extract(from_text("partner.md", text)).service.value == "partner-api"


def test_a_five_whys_section_is_the_root_cause() -> None:
    text = "# Pricing slow\n\n## 5 Whys\n1. Why was checkout slow? Because pricing was slow.\n"
    assert extract(from_text("pricing.md", text))["root_cause"].value.startswith("1. Why was checkout slow?")


def _fields(text: str) -> dict[str, str]:
    return {name: field.value for name, field in extract(from_text("note.md", text)).fields.items()}


def test_each_labelled_item_of_a_list_is_its_own_part() -> None:
    found = _fields(
        "# auth outage\n\n"
        "- 09:40 logins failing for everyone\n"
        "- cause: the internal cert expired, its renewal was stuck\n"
        "- fixed: recreated the issuer, rolled the pods\n"
        "- back at 10:25\n"
        "- todo: alert on cert age\n"
    )
    assert found["root_cause"] == "the internal cert expired, its renewal was stuck"
    assert found["resolution_steps"] == "recreated the issuer, rolled the pods"
    assert found["outcome"] == "alert on cert age"


def test_a_label_naming_no_field_closes_the_item_before_it() -> None:
    found = _fields("- cause: a stale resolver address\n- seen by: the night shift\n")
    assert found["root_cause"] == "a stale resolver address"


def test_a_fields_words_opening_a_paragraph_head_the_text_under_them() -> None:
    found = _fields(
        "Route planner OOM, 2026-04-22\n\ntl;dr\nplanner pods kept getting OOMKilled.\n\n"
        "The fix\nRaised the memory limit, then capped the cache.\n"
    )
    assert found["symptom"] == "planner pods kept getting OOMKilled."
    assert found["resolution_steps"] == "Raised the memory limit, then capped the cache."


def test_a_paragraphs_first_line_naming_no_field_stays_prose() -> None:
    found = _fields("The database\nwas restarted by hand at 10:02 and recovered.\n")
    assert found["resolution_steps"] == "The database was restarted by hand at 10:02 and recovered."


def test_a_heading_line_is_not_read_as_a_sentence_of_the_prose_under_it() -> None:
    found = _fields("### How it ended\nWe rolled back the release and the errors stopped.\n")
    assert found["resolution_steps"] == "We rolled back the release and the errors stopped."


def test_wiki_headings_name_their_fields() -> None:
    assert field_of("What we saw") == "symptom"
    assert field_of("How we fixed it") == "resolution_steps"
    assert field_of("didn't help") == "failed_attempts"
    assert field_of("What made things worse") == "failed_attempts"
    assert field_of("TODO") == "outcome"


SERVICES = ("auth", "route-planner", "orders-db", "route-planner-api")


def test_a_note_naming_a_known_service_in_passing_is_about_it() -> None:
    note = "dns thing on the new nodes\n\nlookups from the Route Planner pods to orders-db timed out.\n"
    found = extract(from_text("dns.txt", note), SERVICES).service
    assert found.value == "route-planner"
    assert note[found.spans[0].start : found.spans[0].end] == "Route Planner"


def test_the_service_the_title_names_comes_before_one_the_text_names_first() -> None:
    note = "auth cert expiry\n\nroute-planner saw 401s from auth all morning.\n"
    assert extract(from_text("cert.txt", note), SERVICES).service.value == "auth"


def test_a_known_name_inside_a_longer_one_is_not_that_service() -> None:
    note = "slow planning\n\nthe route-planner-api and the auth-proxy were slow.\n"
    assert extract(from_text("slow.txt", note), SERVICES).service.value == "route-planner-api"
    assert extract(from_text("slow.txt", "slow\n\nthe auth-proxy was slow.\n"), SERVICES).service.value == ""


def test_a_service_line_is_believed_before_the_known_services() -> None:
    note = "Service: payments\n\nroute-planner saw errors from payments.\n"
    assert extract(from_text("p.txt", note), SERVICES).service.value == "payments"


def test_a_fields_words_opening_a_paragraph_head_that_paragraph_only() -> None:
    found = _fields(
        "Route planner OOM\n\ntl;dr\nplanner pods kept getting OOMKilled.\n\n"
        "Turned out the tiles cache has no size bound.\n"
    )
    assert found["symptom"] == "planner pods kept getting OOMKilled."
    assert found["root_cause"] == "Turned out the tiles cache has no size bound."
