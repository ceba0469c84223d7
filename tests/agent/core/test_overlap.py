"""The words a match is compared by: forgiving of wording, strict on codes, blind to the alert's own name,
and reading what a text says was absent."""

from hypothesis import given
from hypothesis import strategies as st

from agent.core.overlap import (
    OBSERVED,
    asserted,
    codes,
    components,
    contradicts,
    healthy,
    identifier_parts,
    negated,
    stem,
    terms,
)
from memory.text import STOPWORDS


def test_plural_and_tense_meet_halfway() -> None:
    assert stem("logins") == stem("login")
    assert stem("resolving") == stem("resolve")
    assert stem("services") == stem("service")
    assert stem("process") == "process" and stem("pods") == "pods"


def test_the_alert_name_alone_is_no_evidence_of_the_same_failure() -> None:
    alert = "SearchLatencyHigh: search p95 4.0s, queries rejected by the data nodes"
    assert "searchlatencyhigh" in terms(alert)
    assert "searchlatencyhigh" not in terms(alert, masked=frozenset({"searchlatencyhigh"}))


def test_status_codes_count_only_where_asked() -> None:
    assert codes("HTTP 429 from the acquirer, not 5xx") == {"429"}
    assert "429" not in terms("HTTP 429 from the acquirer", with_codes=False)


def test_a_measurement_is_not_a_status_code() -> None:
    assert codes("150 threads waiting, p99 500 ms, pending > 200") == set()
    assert codes("HTTP 502 Bad Gateway; exit code 137; answering 429") == {"502", "137", "429"}


def test_a_code_in_the_plural_is_the_code() -> None:
    """ "Lots of 401s" is how an engineer says the code: it meets a record's 401 and names its component."""
    assert codes("lots of 401s since the key change") == {"401"}
    assert codes("a wave of 502s, then 429s.") == {"502", "429"}
    assert codes("HTTP 500s on checkout") == {"500"}
    assert "401s" not in terms("lots of 401s") and "401" in terms("lots of 401s")
    assert "401" not in terms("lots of 401s", with_codes=False)
    assert components("lots of 401s") == {"auth"}
    for measurement in ("timed out after 500 s", "p99 500ms", "v4.429s.1"):
        assert codes(measurement) == set()


@given(st.sampled_from(["4", "5"]), st.integers(0, 99), st.sampled_from(["", ",", ".", " on checkout"]))
def test_a_code_reads_the_same_alone_and_in_the_plural(first: str, rest: int, after: str) -> None:
    code = f"{first}{rest:02d}"
    assert codes(f"seeing {code}s{after}") == codes(f"seeing {code}{after}") == {code}


def test_what_a_record_says_was_absent_is_read_as_absent() -> None:
    lookalike = "CheckoutLatencyHigh: p99 above 2 s; no 5xx, hikaricp_connections_pending 0."
    assert negated(lookalike) == {"5xx", stem("pending")}
    assert negated("search p95 3.0 s, error rate zero") == {stem("error")}
    assert negated("every failure came from the probe; real traffic healthy") == {stem("error")}


def test_an_error_messages_own_no_is_not_a_healthy_reading() -> None:
    for message in ("No space left on device", "dial tcp: lookup db: no such host", "no healthy upstream"):
        assert negated(message) == set()
        assert not healthy(message)


def test_a_pool_timeout_contradicts_the_lookalike_that_had_nothing_pending() -> None:
    alert = "remaining connection slots are reserved; pool timeout acquiring connection"
    signature = "CheckoutLatencyHigh: p99 above 2 s; no 5xx, hikaricp_connections_pending 0."
    lookalike = (signature, "only latency moved")
    pool = ("HikariPool-1 - Connection is not available, request timed out", "checkout requests timed out")
    assert contradicts(*lookalike, alert)
    assert not contradicts(*pool, alert)


def test_a_contradiction_holds_either_way_round() -> None:
    pool = ("hikaricp_connections_pending > 200", "requests queued for a connection until they timed out")
    assert contradicts(*pool, "checkout p99 2.5s; no 5xx, pending 0, pool idle")
    assert not contradicts(*pool, "checkout p99 2.5s; 150 requests waiting on the pool")


def test_healthy_said_of_another_component_says_where_the_fault_was_not() -> None:
    for said in ("pods restarted while the Redis backend stayed healthy", "other nodes were healthy"):
        assert negated(said) == set()
        assert not contradicts(
            "pods terminated with exit code 137, errors on restart", said, "OOMKilled, errors"
        )
    assert negated("real card traffic was healthy throughout") == {stem("error")}


def test_a_reading_of_none_is_absent_as_a_reading_of_zero_is() -> None:
    details = "check: blackbox probe charge-v1; status: 503 from /v1/charge; real_traffic_errors: none"
    assert stem("error") in negated(details)
    probe = (
        "probe /v1/charge returned 503",
        "every failure came from the probe. Real card traffic was healthy.",
    )
    assert not contradicts(*probe, f"PaymentGateway5xx: synthetic check failing; {details}")
    assert contradicts(*probe, "PaymentGateway5xx: live card payments failing with errors")


def test_a_dns_server_failure_and_a_rebalancing_group_are_readings_that_can_be_absent() -> None:
    nxdomain = ("rcode=NXDOMAIN 400/s; SERVFAIL 0, lookup latency normal", "a scanner probing names")
    assert contradicts(*nxdomain, "coredns_dns_responses_total rcode=SERVFAIL 300/s; getaddrinfo EAI_AGAIN")
    drained = ("kafka_consumergroup_lag peaked at 180k", "no consumer errors, no rebalances; lag drained")
    assert contradicts(
        *drained, "kafka_consumergroup_lag 50k and rising; consumer group rebalances 14 in 10m"
    )
    assert not contradicts(*drained, "kafka_consumergroup_lag 120k on stock-updates; no offset commits")


def test_readings_said_normal_are_neither_shown_nor_absent() -> None:
    assert not {stem("timings"), stem("timeout")} & negated("the handler timings stayed normal")
    # Whose latency was normal is not read: the alert's own may be the fault.
    crashed = ("restart count climbing", "capacity reduced and latency rose under load")
    assert not contradicts(*crashed, "timeouts ~7%; memcached and mongodb latency normal")
    unchanged = "p50 and p99 both shifted by ~250ms; request rate and error rate unchanged"
    assert stem("error") not in asserted(unchanged) | negated(unchanged)
    assert not contradicts("TTFB 2.1s", "No errors appeared beyond a few client timeouts", unchanged)


def test_successes_counted_in_full_say_nothing_failed() -> None:
    sandbox = ("status=429 from card-processor 15/s; all 429s from the sandbox", "captures 100% successful")
    assert healthy(sandbox[1]) and healthy("payment success rate normal")
    assert contradicts(*sandbox, "429 Too Many Requests from the card processor; capture failures piling up")
    assert not healthy("login success rate 55%")


def test_a_symptom_that_recounts_a_failure_is_not_healthy() -> None:
    probe = ("probe /v1/charge returned 503", "every failure came from the probe; real traffic was healthy")
    assert not contradicts(*probe, "PaymentGateway5xx: synthetic check failing")
    snapshot = ("SearchLatencyHigh: p95 above 3 s", "paged during the snapshot. No errors, no user reports.")
    assert contradicts(*snapshot, "search p95 3.4s and 20% of queries failing with 429")


def test_components_meet_across_wordings() -> None:
    assert components("lookup payment-gateway.svc.cluster.local: i/o timeout") >= {"dns"}
    assert components("CoreDNS pods CPU-throttled; ndots:5") >= {"dns"}
    assert components("HikariPool-1 connection is not available") == {"connection-pool"}
    assert components("x509: certificate has expired") == {"certificate"}
    assert components("all writes to the main db erroring") == components("Postgres primary at max load")
    # Engineers call Postgres "pg" (pg_stat_activity, "pg says too many clients"): the same database.
    assert components("cart saves erroring, pg says too many clients") == {"database"}
    assert components("blocked queries in pg_stat_activity") == components("psql shows blocked queries")


def test_a_failed_name_lookup_names_dns_in_the_resolver_s_own_words() -> None:
    # A DNS alert that names the host it could not resolve ("redis-cart") shares that host's component
    # with every record of it; the resolver's error words keep the lookup in view.
    assert components("cannot resolve redis-cart.svc, getaddrinfo EAI_AGAIN") == {"dns", "cache"}
    assert components("upstream answered SERVFAIL for api.internal") >= {"dns"}


def test_words_that_name_something_else_as_often_name_no_component() -> None:
    assert components("APNs push delivery slow, apns-topic mismatch errors") == frozenset()
    assert components("ntp offset 40s on two hosts") == frozenset()
    assert components("payment-gateway confirmations timing out") == frozenset()
    assert components("it resolved when the import finished") == frozenset()
    assert components("redis shard 3 at 100% cpu") == {"cache"}


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz 0459_.:;,%>", max_size=120))
def test_negated_words_are_observations_and_never_also_asserted(text: str) -> None:
    absent = negated(text)
    assert {word for word in absent if not word.isdigit()} <= OBSERVED
    assert all(word[0] in "45" and len(word) == 3 for word in absent if word.isdigit())
    assert not absent & asserted(text)


def test_what_the_alert_says_was_absent_is_held_against_the_recorded_cause() -> None:
    hot_key = ("redis shard 3 CPU 100 %, slowlog dominated by one GET", "add-to-cart p99 2.5 s")
    cause = "every add-to-cart read the same SKU's stock counter, a single hot key on one shard"
    assert contradicts(*hot_key, "cart p99 900ms, no hot keys, pod cpu 95% since the release", cause)
    assert not contradicts(*hot_key, "cart p99 2s, one redis shard at 100% cpu on a single key", cause)


def test_a_code_said_absent_contradicts_the_record_that_paged_with_it() -> None:
    limited = ("ProcessorClientException: 429 Too Many Requests", "confirmations timed out")
    assert negated("no 429s from the processor") == {"429"}
    assert contradicts(*limited, "payment confirm p99 4s; no 429s from the processor, db cpu 90%")
    assert not contradicts(*limited, "payment confirms timing out, processor answering 429s")


def test_evictions_and_lag_are_readings_an_engineer_reports_absent() -> None:
    assert stem("evictions") == stem("evicted") and stem("lagging") == stem("lag")
    evicted = ("redis evicted_keys rising at 3,000/s", "items disappearing from carts")
    assert contradicts(*evicted, "items vanishing from carts; no evictions in INFO stats")
    lag = ("consumer lag 2M on orders", "orders processed hours late")
    assert contradicts(*lag, "orders slow to confirm, consumers up and no lag")


def test_a_low_error_rate_is_a_healthy_reading_and_a_high_one_a_failure() -> None:
    assert stem("error") not in asserted("checkout p99 2.3 s, error rate 0.1 %")
    assert stem("error") in asserted("checkout p99 2.3 s, error rate 12 %")
    assert not contradicts("p99 2.3 s for 5 m, error rate 0.1 %.", "", "no 5xx, pending 0, pool idle")


def test_an_identifier_meets_its_words() -> None:
    alert = terms("redis SET rejected: used_memory reached the maxmemory limit")
    record = terms("OOM command not allowed when used memory > 'maxmemory'")
    assert {"used_memory", "used", "memory", "maxmemory"} <= alert
    assert {"used", "memory", "maxmemory"} <= alert & record
    host = terms("es-data.svc.cluster.local lookup i/o timeout")
    other = terms("lookup payment-gateway.svc.cluster.local: i/o timeout")
    assert {"svc", "cluster", "local"} <= host & other
    parts = identifier_parts("SQLTransientConnectionException on OrderRepository.save")
    assert parts == {"order", "repository", "save"}


def test_a_camel_case_word_alone_stays_whole() -> None:
    assert terms("CheckoutLatencyHigh: p99 above 2 s") == {"checkoutlatencyhigh", "p99", "abov", "s"}
    assert "latency" not in terms("CheckoutLatencyHigh: p99 above 2 s")


def test_a_masked_identifier_gives_no_parts() -> None:
    masked = frozenset({"checkout_latency_high"})
    assert identifier_parts("checkout_latency_high fired", masked=masked) == set()


def test_a_queue_building_up_is_one_observation() -> None:
    assert stem("waiting") == stem("pending") == stem("queued") == stem("waits")
    pool = ("hikaricp_connections_pending > 200", "requests queued for a connection")
    assert contradicts(*pool, "checkout p99 2.5s; no connection waits")


def test_a_pool_timeout_shows_requests_waited_and_meets_an_idle_pool() -> None:
    """ "That's the pool": a timeout acquiring a connection is a queue in the pool, whatever words say it."""
    idle = ("CheckoutLatencyHigh: p99 2.3 s for 5 m, error rate 0.1 %", "connection pool idle")
    for alert in (
        "remaining connection slots are reserved; pool timeout acquiring connection",
        "HikariPool-1 - Connection is not available, request timed out after 30000ms",
        "checkout p99 above 2s, db pool timed out",
        "timed out waiting for a connection from the pool",
    ):
        assert stem("pending") in asserted(alert)
        assert contradicts(*idle, alert)
    for alert in ("checkout p99 above 2s", "idle timeout 10 m on the pool", "request timeout on /checkout"):
        assert stem("pending") not in asserted(alert)
        assert not contradicts(*idle, alert)


def test_a_timeout_is_one_observation_however_it_is_worded() -> None:
    assert stem("timing") == stem("timed") == stem("timeout") == stem("timeouts")
    alert = terms("150 waiting in the pool, some requests timing out")
    assert stem("timeout") in alert & terms("request timed out after 30000ms")


def test_a_pool_timeout_is_a_queue_to_the_overlaps_too() -> None:
    """The record that paged with HikariCP's timeout shares the waiting with an alert that counts waiters,
    as the contradiction reads it: one reading of the same words for agreement and disagreement."""
    hikari = "HikariPool-1 - Connection is not available, request timed out after 30000ms"
    assert stem("pending") in terms(hikari) & terms("threads blocked acquiring a db connection, 150 waiting")
    assert stem("pending") not in terms("request timeout on /checkout")


def test_an_idle_pool_had_nothing_pending() -> None:
    assert negated("p99 2.3 s, error rate normal, connection pool idle.") == {stem("pending")}
    assert negated("the pool was idle the whole time") == {stem("pending")}
    for reading in ("60 sessions idle in transaction", "150 idle connections", "idle timeout 10 m"):
        assert negated(reading) == set()
    lookalike = ("p99 2.3 s for 5 m", "nightly import; error rate normal, connection pool idle")
    assert contradicts(*lookalike, "threads blocked acquiring a db connection, 150 waiting in the pool")
    assert not contradicts(*lookalike, "checkout p99 3.1s during the nightly import")


def test_an_adverb_meets_its_adjective() -> None:
    assert stem("intermittently") == stem("intermittent")
    assert stem("repeatedly") == stem("repeat")
    assert stem("slowly") == "slowly" and stem("supply") == "supply"


_WORD = st.text(alphabet="ghijklmnopqrstuvwxyz", min_size=3, max_size=10).filter(lambda w: w not in STOPWORDS)


@given(st.lists(_WORD, min_size=2, max_size=5), st.sampled_from("_."))
def test_an_identifier_holds_every_word_it_joins(words: list[str], joiner: str) -> None:
    identifier = joiner.join(words)
    assert terms(" ".join(words)) <= terms(f"the {identifier} metric")
    assert not identifier_parts(identifier, masked=frozenset({identifier}))


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.;", max_size=80))
def test_an_idle_pool_is_never_read_as_a_queue(prefix: str) -> None:
    text = f"{prefix} connection pool idle"
    assert stem("pending") in negated(text)
    assert stem("pending") not in asserted(text)


def test_work_the_alert_says_was_not_running_contradicts_the_lookalike_it_caused() -> None:
    nightly = (
        "CheckoutLatencyHigh: p99 above 2 s",
        "p99 up while the nightly price import rewrote the table",
    )
    cause = "the nightly price import job held locks on the price table"
    assert contradicts(*nightly, "checkout p99 above 2s at the lunch peak; no import job running", cause)
    assert not contradicts(*nightly, "checkout p99 above 2s at 03:05 during the price import", cause)
    assert not contradicts(
        *nightly, "checkout p99 above 2s; no deploy today", "a deploy turned the cache off"
    )
