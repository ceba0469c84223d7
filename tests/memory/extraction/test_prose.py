"""Prose without headings (status-page write-ups) and text decoded from HTML exports."""

from pathlib import Path

from memory.extraction.document import from_text
from memory.extraction.draft import draft_row
from memory.extraction.extract import extract
from memory.extraction.model import Span
from memory.extraction.prose import role_of, sentences
from memory.extraction.readers import read_bytes
from memory.history import HistoryRow

FILES = Path(__file__).parent / "files"

STATUS_PAGE = """Summary of the Queue Service Event in the EU-West Region
March 3rd, 2023

We want to share more about the disruption to the queue service on March 1st, 2023.

Between 10:02 and 11:40 UTC, customers experienced elevated error rates and increased latency when
sending messages, and some requests failed with HTTP 503 responses. Consumers saw "QueueNotFound" errors
for existing queues.

The root cause was a configuration change to the metadata cache that set its time-to-live to zero. Every
request then went to the metadata store, which was not sized for that load.

Restarting the cache nodes did not resolve the issue, as they came back with the same setting. Engineers
mitigated the issue by reverting the configuration change at 11:21 UTC. Error rates returned to normal
by 11:40 UTC as the cache refilled.

We will add a check that refuses a time-to-live of zero, and we are adding an alarm on metadata store
load. We apologize for the impact this event had on our customers.
"""


def test_status_page_sentences_find_their_fields_by_cue() -> None:
    extraction = extract(from_text("queue.txt", STATUS_PAGE))
    assert extraction["symptom"].value.startswith("Between 10:02 and 11:40 UTC, customers experienced")
    assert extraction["root_cause"].value.startswith("The root cause was a configuration change")
    assert "not sized for that load" in extraction["root_cause"].value  # the next sentence carries on
    resolution = extraction["resolution_steps"].value
    assert "reverting the configuration change" in resolution and "returned to normal" in resolution
    assert extraction["failed_attempts"].value.startswith("Restarting the cache nodes did not resolve")
    assert extraction["outcome"].value.startswith("We will add a check")
    assert "apologize" not in " ".join(f.value for f in extraction.fields.values())
    signature = extraction["error_signature"].value.splitlines()
    assert signature[:4] == [
        "elevated error rates",
        "increased latency",
        "HTTP 503 responses",
        "QueueNotFound",
    ]
    assert extraction["timestamp"].value == "2023-03-01"
    assert extraction.service.value == "Queue"  # the title's words before "Service Event"
    assert extraction.missing == ()


def test_draft_row_of_a_complete_extraction_is_an_import_row() -> None:
    document = from_text("queue.txt", STATUS_PAGE)
    row = draft_row(document, extract(document))
    row["service"] = row["service"] or "queue"
    parsed = HistoryRow.model_validate(row)
    assert parsed.root_cause.startswith("The root cause was")
    assert row["incident_id"] == f"queue-{document.content_hash[:8]}"
    assert draft_row(document, extract(document))["incident_id"] == row["incident_id"]


def test_confluence_export_decoded_to_text_fills_the_template() -> None:
    read = read_bytes("cache.html", (FILES / "confluence-cache-eviction.html").read_bytes())
    (document,) = read.documents
    extraction = extract(document)
    assert extraction["symptom"].value.startswith("Service: catalog-api.")
    assert "Product pages loaded without prices" in extraction["symptom"].value
    assert (
        extraction["error_signature"].value
        == "redis.exceptions.ConnectionError: max number of clients reached"
    )
    assert extraction["root_cause"].value.startswith("A bulk price import invalidated every catalog key")
    assert "Paused the price import job." in extraction["resolution_steps"].value
    assert "Restarted catalog-api" in extraction["resolution_steps"].value
    assert extraction["outcome"].value.startswith("Prices were back at 20:40.")
    assert extraction.service.value == "catalog-api"
    assert extraction.missing == ()


def test_sentences_keep_abbreviations_and_list_items() -> None:
    text = "Traffic fell approx. 40% at 9 a.m. Engineers paged the team.\n- rolled back\n- restarted"
    found = [text[s.start : s.end] for s in sentences(text, Span(0, len(text)))]
    assert found == [
        "Traffic fell approx. 40% at 9 a.m. Engineers paged the team.",
        "- rolled back",
        "- restarted",
    ]


def test_roles_are_checked_in_order() -> None:
    assert role_of("We apologize for the errors customers experienced.") == "aside"
    assert role_of("We will roll back faster in the future.") == "outcome"
    assert role_of("The failover did not resolve the errors.") == "failed_attempts"
    assert role_of("The outage was caused by an expired certificate.") == "root_cause"
    assert role_of("Engineers restored service by rolling back.") == "resolution_steps"
    assert role_of("Customers saw elevated latency.") == "symptom"
    assert role_of("The team met on Tuesday.") is None


def test_an_error_quoted_after_what_logged_or_threw_it_is_a_signature() -> None:
    text = (
        "Carts failed to save for 20 minutes.\n\n"
        'The cart service logged "OOM command not allowed when used memory > maxmemory" on every write, '
        'and the consumer group threw "CommitFailedException" during the rebalance.\n'
    )
    signature = extract(from_text("cart.txt", text))["error_signature"].value.splitlines()
    assert "OOM command not allowed when used memory > maxmemory" in signature
    assert "CommitFailedException" in signature


def test_an_error_in_backticks_is_a_signature_whole_with_the_quotes_inside_it() -> None:
    text = (
        "Every write to the orders database failed for 48 minutes.\n\n"
        'Postgres logged `PANIC: could not write to file "pg_wal/xlogtemp.123": No space left on device` '
        "and the workers saw `connection reset by peer` errors.\n"
    )
    signature = extract(from_text("orders.md", text, "markdown"))["error_signature"].value.splitlines()
    assert signature[0] == 'PANIC: could not write to file "pg_wal/xlogtemp.123": No space left on device'
    assert "connection reset by peer" in signature
    assert "pg_wal/xlogtemp.123" not in signature


def _title(name: str, data: bytes) -> str:
    (document,) = read_bytes(name, data).documents
    return extract(document).title.value


def test_a_google_docs_export_is_titled_by_its_title_line_not_its_first_section() -> None:
    assert _title("pay.html", (FILES / "gdocs-payment-timeouts.html").read_bytes()) == (
        "Postmortem: payment gateway timeouts"
    )


def test_a_page_is_titled_by_its_own_heading_before_the_sites_title() -> None:
    page = b"""<html><head><title>Engineering Wiki</title></head><body><nav>Home</nav>
    <h1>Checkout outage: connection pool exhausted</h1><h2>Root cause</h2><p>Too small.</p></body></html>"""
    assert _title("wiki.html", page) == "Checkout outage: connection pool exhausted"


def test_a_page_without_a_title_heading_is_titled_by_its_title_tag() -> None:
    page = b"""<html><head><title>Search latency review</title></head><body><p>Seen at noon.</p>
    <h1>Impact</h1><p>Slow.</p><h1>Root cause</h1><p>Pool too small.</p></body></html>"""
    assert _title("search.html", page) == "Search latency review"


def test_a_google_docs_title_line_is_the_title_before_a_section_that_names_no_field() -> None:
    page = b"""<html><body><p class="title">Notification fan-out stalled</p><h1>Lessons learned</h1>
    <p>Alert on queue age.</p><h1>Root cause</h1><p>The worker pool was sized at 2.</p></body></html>"""
    assert _title("fanout.html", page) == "Notification fan-out stalled"


def test_a_header_of_labelled_lines_is_no_prose_the_cues_may_read() -> None:
    text = """INCIDENT REPORT - office VPN concentrator failover loop
Service: vpn-gateway
Date: 2026-04-03
Author: netops on-call

The root cause was a heartbeat timeout set below the link's jitter after a firmware upgrade.

We mitigated the issue by raising the heartbeat timeout to 3 s.
"""
    found = extract(from_text("vpn.txt", text))
    assert found["resolution_steps"].value.startswith("We mitigated the issue by raising the heartbeat")
    assert found.service.value == "vpn-gateway"


def test_a_pagerduty_incidents_trigger_details_are_its_symptom() -> None:
    first, _ = read_bytes("pd.json", (FILES / "pagerduty-incidents.json").read_bytes()).documents
    assert extract(first)["symptom"].value.startswith("Consumer lag on the inventory-events topic grew")


def test_a_teams_casual_words_give_sentences_their_roles() -> None:
    assert role_of("Don't restart coredns, that made it worse.") == "failed_attempts"
    assert role_of("I tried bumping the worker replicas, no change") == "failed_attempts"
    assert role_of("The reason: the proxy has a per-source rate limit.") == "root_cause"
    assert role_of("What was actually going on is that the poll took too long.") == "root_cause"
    assert role_of("That happens because the disks crossed the watermark.") == "root_cause"
    assert role_of("looks like the new version acks only after the provider answers") == "root_cause"
    assert role_of("Turned out the tiles cache has no size bound.") == "root_cause"
    assert role_of("resolv.conf on the new nodes pointed at the old resolver,") == "root_cause"
    assert role_of("we rolled the node pool back to the previous image") == "resolution_steps"
    assert role_of("ok rolling back notifier to v2.31") == "resolution_steps"
    assert role_of("We paused the export job.") == "resolution_steps"
    assert role_of("recreated the issuer") == "resolution_steps"
    assert role_of("Fixed by raising maxmemory on the session cache.") == "resolution_steps"
    assert role_of("payments-worker is throwing errors on every call") == "symptom"
    assert role_of("positions on the map were frozen") == "symptom"
    assert role_of("Search was slow for an hour.") == "symptom"
    assert role_of("so lookups timed out and the pods went into crashloop.") == "symptom"
    assert role_of("new orders not showing up in search") == "symptom"
    assert role_of("partners stopped getting webhooks") == "symptom"
    assert role_of("customers are complaining about double messages") == "symptom"


CHAT = """#incident-payments, pasted from the channel

[14:02] maria: checkout is throwing errors on every capture call
[14:06] maria: logs say `upstream connect error`
[14:09] tom: the root cause: the provider rotated its cert and our bundle lacks the intermediate
[14:12] maria: I tried adding replicas, no change
[14:15] tom: pushed the new bundle and restarted the worker
"""


def test_a_pasted_chat_thread_fills_fields_by_message_without_times_and_names() -> None:
    found = extract(from_text("chat.txt", CHAT))
    assert (
        found["symptom"].value
        == "checkout is throwing errors on every capture call\nlogs say `upstream connect error`"
    )
    assert found["root_cause"].value.startswith("the root cause: the provider rotated its cert")
    assert found["failed_attempts"].value == "I tried adding replicas, no change"
    assert found["resolution_steps"].value == "pushed the new bundle and restarted the worker"
    assert "maria" not in found["symptom"].value and "14:" not in found["resolution_steps"].value


def test_a_consequence_gets_its_own_role_and_a_step_keeps_what_prompted_it() -> None:
    found = extract(
        from_text(
            "dns.txt",
            "resolv.conf on the new nodes pointed at the old resolver, so customers saw elevated error "
            "rates.\n\n"
            "Latency was still elevated, so at 21:54 engineers restarted the remaining servers.\n",
        )
    )
    assert found["root_cause"].value == "resolv.conf on the new nodes pointed at the old resolver,"
    assert found["resolution_steps"].value == (
        "Latency was still elevated, so at 21:54 engineers restarted the remaining servers."
    )


def test_a_message_the_log_says_or_a_write_was_rejected_with_is_a_signature() -> None:
    text = (
        "Search stopped indexing new orders for an hour.\n\n"
        "The indexer's log says `FORBIDDEN/12/index read-only` on every bulk request, the workers were "
        'blocked on `SocketTimeoutException: Read timed out`, and every write was rejected with "OOM '
        'command not allowed". To clear it we ran `PUT _all/_settings` by hand.\n'
    )
    signature = extract(from_text("search.txt", text))["error_signature"].value.splitlines()
    assert signature == [
        "FORBIDDEN/12/index read-only",
        "SocketTimeoutException: Read timed out",
        "OOM command not allowed",
    ]


def test_without_follow_ups_the_sentences_saying_it_came_back_are_the_outcome() -> None:
    note = (
        "dns thing\n\n"
        "Lookups from the planner timed out. We rolled the node pool back and it cleared within ten "
        "minutes.\n\nThe export job was paused, and duplicates stopped. Sessions were fixed at 19:50.\n"
    )
    outcome = extract(from_text("dns.txt", note))["outcome"].value.splitlines()
    assert outcome == [
        "We rolled the node pool back and it cleared within ten minutes.",
        "The export job was paused, and duplicates stopped.",
        "Sessions were fixed at 19:50.",
    ]


def test_follow_ups_are_the_outcome_before_a_recovery() -> None:
    note = "Checkout errors for an hour.\n\nWe rolled back and errors cleared. We will add a canary check.\n"
    assert extract(from_text("c.txt", note))["outcome"].value == "We will add a canary check."


def test_a_note_written_in_lower_case_still_has_sentences() -> None:
    text = "lookups timed out. we rolled the pool back. then it cleared, e.g. we saw no errors."
    found = [text[s.start : s.end] for s in sentences(text, Span(0, len(text)))]
    assert found == [
        "lookups timed out.",
        "we rolled the pool back.",
        "then it cleared, e.g. we saw no errors.",
    ]


def test_a_casual_dns_note_fills_its_fields() -> None:
    note = (
        "ok so what happened: around 2am resolv.conf on the new nodes pointed at the old resolver, so "
        "lookups timed out and the pods went into crashloop. we rolled the node pool back and it cleared.\n\n"
        "don't restart coredns, that made it worse.\n"
    )
    found = extract(from_text("dns.txt", note))
    assert found["root_cause"].value.endswith("resolv.conf on the new nodes pointed at the old resolver,")
    assert found["symptom"].value == "so lookups timed out and the pods went into crashloop."
    assert found["resolution_steps"].value == "we rolled the node pool back and it cleared."
    assert found["outcome"].value == "we rolled the node pool back and it cleared."
    assert found["failed_attempts"].value == "don't restart coredns, that made it worse."
