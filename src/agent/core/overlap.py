"""The words an alert and a remembered record are compared by, for the precedent confidence's overlaps.

Alerts are worded by alerting systems and tired engineers, records by whoever wrote the post-mortem,
so the comparison is made forgiving where wording varies and strict where it should not:

- words are compared by a light stem ("logins" is "login", "resolving" is "resolve");
- status codes (4xx and 5xx standing alone or in the plural, "429s", not measurements like "500 ms")
  count, because 429 is not 502, but only when the alert names one: an alert without a code is not
  faulted for not repeating the record's;
- the alert's own name is left out: that an alert with the same name fired before is exactly what a
  healthy lookalike shares with a real fault, so it is no evidence of the same failure;
- what a text says was absent ("no 5xx", "pending 0", "real traffic healthy", "captures 100%
  successful") is read as absent, and an error rate said unchanged neither shows a failure nor rules one
  out, so an alert and a record that contradict each other can be told apart from two that agree;
- named components (database, connection pool, DNS, certificate, ...) are compared by what they are,
  not how they are spelled, so a failure told in another service's words still meets its record;
- an identifier (words joined by underscores or dots) counts whole and by its parts, camelCase ones
  included ("used_memory" meets "used memory", "OrderRepository.save" meets "order repository",
  "es-data.svc.cluster.local" meets "payment-gateway.svc.cluster.local" on the cluster domain), since
  metric names and hostnames are how alerting systems spell what records say in words; a camelCase word
  standing alone is left whole: alert names are spelled so, and a record's "CheckoutLatencyHigh"
  meeting an alert's "checkout latency" is the likeness a healthy lookalike shares with a fault;
- the words for a queue building up ("waiting", "pending", "queued") are one observation, as are those
  for a timeout ("timing out", "timed out", "timeouts"); a pool timeout shows the queue too, and a pool
  or queue said to be idle had nothing pending.
"""

import re
from functools import lru_cache

from memory.text import tokens

# A code is a 4xx or 5xx number standing alone, not a measurement ("500 ms", "150 waiting", "> 200")
# that shares its digits but not its meaning; or any three digits a code is named for ("exit code 137").
# A sentence may end on it ("answering 429."), a version or decimal may not hold it ("4.429.1", "429.5").
# Engineers count codes in the plural ("429s", "a wave of 502s"): that is the code, not 429 seconds.
_END = r"(?!\w|\.\w)"
_ALONE = rf"(?:(?=s{_END})|{_END})"
_CODE = re.compile(
    rf"(?<![\w.<>=])(?<![<>=] )[45]\d\d(?:(?=s{_END})|{_END}(?!\s*(?:ms|s|sec|seconds|minutes|%|mb|gb|kb|"
    r"k|rps|qps|requests|connections|threads|waiting|pending|pods)\b))"
    rf"|(?<=code )[1-5]\d\d{_ALONE}|(?<=status )[1-5]\d\d{_ALONE}|(?<=http )[1-5]\d\d{_ALONE}"
)
# A code in the plural is read as the code alone (``codes``), so the word itself is no term.
_PLURAL_CODE = re.compile(r"^[1-5]\d\ds$")
_SUFFIXES = ("ing", "ed", "es", "s")
MIN_WORDS = 4
# An identifier: words joined by underscores or dots; its parts split camelCase and digits too.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_.][A-Za-z0-9]+)+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Stems that name the same observation, folded to the first.
_SAME_OBSERVATION = (
    ("pend", "wait", "queu", "queue"),
    ("evict", "eviction"),
    ("lag", "lagg"),
    ("timeout", "timed", "timing"),
)
_CANONICAL = {word: group[0] for group in _SAME_OBSERVATION for word in group}


@lru_cache(maxsize=1 << 16)  # a briefing stems the same record words many times
def stem(word: str) -> str:
    """A light suffix strip, enough to meet plural, tense and adverb halfway ("intermittently" is
    "intermittent"); short words are left alone; words for one observation meet at one stem."""
    if len(word) > 6 and word.endswith("ly"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    word = word[:-1] if len(word) > 4 and word.endswith("e") else word
    return _CANONICAL.get(word, word)


# Readings of this many texts are kept: a briefing reads the alert against each recalled record, and the
# same records come back alert after alert. Kept readings are frozen, so no caller can change them.
_KEPT = 4096


@lru_cache(maxsize=_KEPT)
def codes(text: str) -> frozenset[str]:
    return frozenset(_CODE.findall(text.lower()))


def identifier_parts(text: str, *, masked: frozenset[str] = frozenset()) -> set[str]:
    """The content words inside a text's identifiers, stemmed ("hikaricp_connections_pending" gives
    ``hikaricp``, ``connection`` and ``pend``); a masked identifier gives none."""
    parts = [
        part
        for identifier in _IDENTIFIER.findall(text)
        if identifier.lower() not in masked
        for part in _PART.findall(identifier)
    ]
    return {stem(t) for t in tokens(" ".join(parts)) if t not in masked}


@lru_cache(maxsize=_KEPT)
def terms(text: str, *, with_codes: bool = True, masked: frozenset[str] = frozenset()) -> frozenset[str]:
    """Stemmed content words of a text, whole and inside its identifiers (and its codes), without the
    masked words."""
    words = (t for t in tokens(text) if t not in masked and not _PLURAL_CODE.match(t))
    found = {stem(t) for t in words} | identifier_parts(text, masked=masked)
    if _WAITED.search(text.lower()):
        found.add(_PENDING)
    return frozenset(found | codes(text) if with_codes else found)


# Words that say something failed. A record that negates them ("no errors", "nothing failed", "error rate
# zero", "no 5xx", "SERVFAIL 0") recorded a healthy lookalike; an alert that carries them shows a fault.
_FAILURE_WORDS = """error errors fail failed failing failure failures reject rejected rejecting rejection
timeout timeouts timed exception refused unavailable denied crash crashed crashing oomkilled killed 5xx
servfail"""
_FAILURE = frozenset(stem(w) for w in _FAILURE_WORDS.split())
# What an engineer observes and can say was absent: failures, and the queues a fault builds up. Only
# these count as negated, so an error message's own "no" ("No space left on device", "no such host")
# is never read as a healthy reading.
_QUEUED_WORDS = "waits waiting pending queued backlog retries restarts"
# Other readings an engineer checks and reports as absent ("no hot keys", "no consumer lag", "no
# evictions", "no throttling", "no rebalances"), each the mark of a known failure.
_READING_WORDS = "hot lag lagging evictions evicted throttled throttling rebalances rebalancing"
# Scheduled work an engineer checks was or was not running when it paged ("no import job running", "no
# backup in progress"), each the cause of a known lookalike. Not a deploy: "no deploy today" beside a
# record whose fault a deploy brought in is still that fault (measured on the alert-shaped replays).
_ACTIVITY_WORDS = "import job jobs cron migration backup reindex batch"
OBSERVED = _FAILURE | frozenset(
    stem(w) for w in f"{_QUEUED_WORDS} {_READING_WORDS} {_ACTIVITY_WORDS}".split()
)
# A negation covers the next two words ("no connection waits", "without errors"); a word followed by zero
# or none is negated too, with the word before it ("hikaricp_connections_pending 0", "error rate zero",
# "real_traffic_errors: none", as incident tools write a reading in their details).
# Identifiers are split on underscores so that "connections_pending" negates "pending".
_NEGATED_AFTER = re.compile(r"\b(?:no|without|never|nothing|none|zero)\s+([a-z0-9_]+)(?:\s+([a-z0-9_]+))?")
_NEGATED_BEFORE = re.compile(
    r"\b([a-z][a-z0-9_]*)(?:\s+([a-z][a-z0-9_]*))?"
    r"\s*(?:=+|:|at|of|is|was|stayed at)?\s*(?:0|zero|none)(?![\w%]|\.\d)"
)
# An error rate said normal or unchanged shows no failure, nor says that none happened: "errors stayed low"
# beside it is one observation, not two. (Other readings said normal are left as words: "memcached latency
# normal" says whose latency was not the fault, as "the Redis backend stayed healthy" does, and meets an
# alert on the service's own latency.)
_RATE_NORMAL = re.compile(
    r"\b(?:error|failure|5xx)s?\s+(?:rates?|ratios?)\s+(?:(?:is|was|were|stayed|remained)\s+)?"
    r"(?:normal|nominal|unchanged|within\s+(?:the\s+)?(?:slo|sla|baseline))\b",
    re.IGNORECASE,
)
# "Real traffic was healthy" says no error as plainly as "no errors" does. Said of something else ("the
# Redis backend stayed healthy", "other nodes were healthy", "checkout itself was healthy") it says where
# the fault was not, and that the failure seen was real; "no healthy upstream" is an error of its own.
# Successes counted in full or said normal ("captures 100% successful", "payment success rate normal") say
# the same.
_HEALTHY = re.compile(
    r"\b(?:traffic|requests)\s+(?:(?:was|were|is|stayed|remained)\s+)?healthy\b"
    r"|\b100\s*%\s+success(?:ful)?\b|\bsuccess(?:\s+rate)?\s+(?:(?:was|is|stayed|remained)\s+)?(?:normal|100\s*%)"
)
_HEALTHY_MEANS = stem("error")
# An error rate under one percent is a healthy reading ("error rate 0.1 %"), not a failure shown.
_RATE = re.compile(
    r"\b(?:error|failure|5xx)s?\s+(?:rate|ratio)\s*(?:stayed at|of|at|:|=)?\s*(\d+(?:\.\d+)?)\s*%",
    re.IGNORECASE,
)
LOW_RATE = 1.0
_CODE_CLASS = re.compile(r"\b([1-5])xx\b")


# A pool or queue said to be idle had nothing waiting in it ("connection pool idle", "the pool was
# idle"); sessions "idle in transaction" or "150 idle connections" are readings of something else.
_IDLE = re.compile(
    r"\b(?:pools?|queues?)\s+(?:(?:was|were|is|stayed|remained)\s+)?idle\b|\bidle\s+(?:pools?|queues?)\b"
)
_PENDING = stem("pending")
# A pool timeout is requests that waited for a connection until they gave up: it shows a queue as
# plainly as "150 waiting in the pool" does ("pool timeout acquiring connection", HikariCP's "Connection
# is not available, request timed out"), and so meets a record that had nothing pending.
_WAITED = re.compile(
    r"\bpool\s+tim(?:eout|ed\s+out)\b|\btim(?:eout|ed\s+out)\s+(?:acquiring|waiting\s+for)\b"
    r"|\bconnection\s+is\s+not\s+available\b"
)


def _words(fragment: str) -> set[str]:
    return {stem(part) for part in fragment.split("_") if part}


@lru_cache(maxsize=_KEPT)
def negated(text: str) -> frozenset[str]:
    """Observations a text says were absent or zero ("no 5xx" gives ``5xx``, "pending 0" gives ``pend``, and
    a status code said absent is a failure not seen: "no 429s" gives ``429``)."""
    lowered = text.lower()
    found: set[str] = set()
    coded: set[str] = set()
    for pattern in (_NEGATED_AFTER, _NEGATED_BEFORE):
        for match in pattern.finditer(lowered):
            for group in match.groups():
                if group:
                    found |= _words(group)
                    coded.update(*(codes(part) for part in group.split("_")))
    if _HEALTHY.search(lowered):
        found.add(_HEALTHY_MEANS)
    if _IDLE.search(lowered):
        found.add(_PENDING)
    return frozenset(found & OBSERVED | coded)


def _measured_low(match: re.Match[str]) -> str:
    return "" if float(match.group(1)) < LOW_RATE else match.group(0)


@lru_cache(maxsize=_KEPT)
def asserted(text: str) -> frozenset[str]:
    """The text's stems, the parts of its identifiers ("connections_pending" gives ``pend``), status
    codes (with their class, "502" gives ``5xx``) and a queue a pool timeout implies, less what it
    negates."""
    read = _RATE_NORMAL.sub("", _RATE.sub(_measured_low, text))  # in its own case, for camelCase parts
    lowered = read.lower()
    classes = {f"{c[0]}xx" for c in codes(lowered)} | {f"{c}xx" for c in _CODE_CLASS.findall(lowered)}
    return (terms(read) | classes) - negated(lowered)


def healthy(text: str) -> bool:
    """Whether a text says nothing failed ("no 5xx", "error rate zero", "real traffic healthy") and
    shows no failure of its own."""
    return bool(negated(text) & _FAILURE) and not asserted(text) & _FAILURE


@lru_cache(maxsize=_KEPT)
def contradicts(signature: str, symptom: str, alert: str, cause: str = "") -> bool:
    """Whether the alert and a record contradict each other, either way round: one says an observation
    was absent that the other shows ("no connection waits" against "150 waiting", "pending 0" against
    "pending > 200"), or one says nothing failed while the other shows a failure. What the alert says was
    absent is held against the record's recorded cause too ("no hot keys" against a hot key). The record's
    signature and symptom are read apart, since a symptom may recount what failed before it says what
    did not; a healthy alert is held against the error the record paged with (its signature), not
    against a symptom that measured a low error rate."""
    record = f"{signature} {symptom}"
    if negated(record) & asserted(alert):
        return True
    absent = negated(alert)  # most alerts say nothing was absent: then the record need not be read for it
    if absent and absent & (asserted(record) | asserted(cause)):
        return True
    if healthy(signature) or healthy(symptom):
        return bool(asserted(alert) & _FAILURE)
    return healthy(alert) and bool(asserted(signature) & _FAILURE)


# Named components engineers and alerting rules say in different words: a DNS lookup timeout and a
# CoreDNS failure are one component, whatever service paged. Words that name something else as often are
# left out: a "resolved" incident, an APNs topic, a clock offset, a disk partition, a Redis shard, traffic
# volume, and "gateway", which the services' own names carry (payment-gateway, api-gateway).
_COMPONENT_WORDS: dict[str, str] = {
    "database": "postgres postgresql pg psql mysql database db sql sqlstate",
    "connection-pool": "hikari hikaricp hikaripool pgbouncer connection connections",
    "dns": "dns coredns lookup nxdomain resolver getaddrinfo eai_again servfail ndots",
    "certificate": "certificate cert tls ssl x509 handshake",
    "stream": "kafka consumer lag rebalance",
    "cache": "redis cache maxmemory memcached evict eviction",
    "disk": "disk space inode filesystem",
    "memory": "oom oomkilled heap memory",
    "rate-limit": "429 throttle throttled throttling ratelimit",
    "auth": "jwt jwks token oauth 401 login",
    "search-engine": "elasticsearch reindex circuit_breaking_exception",
    "mail": "smtp mail email relay",
    "upstream": "502 503 upstream envoy proxy",
    "deploy": "deploy deployed release rollout canary",
}
_COMPONENTS: dict[str, str] = {
    stem(word): name for name, words in _COMPONENT_WORDS.items() for word in words.split()
}


@lru_cache(maxsize=_KEPT)
def components(text: str) -> frozenset[str]:
    """The named components a text mentions (database, connection pool, DNS, certificate, ...)."""
    return frozenset(_COMPONENTS[t] for t in terms(text) if t in _COMPONENTS)
