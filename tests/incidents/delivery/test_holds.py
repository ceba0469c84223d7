"""A receiver's Retry-After as the pages read it: until when the channel waits, and the answer that asked."""

from datetime import timedelta

from sqlalchemy.orm import Session

from incidents.delivery import outbox
from incidents.delivery.holds import channel_holds
from incidents.timeutil import utcnow
from tests.incidents.delivery.test_outbox import channels
from tests.incidents.resolution.factories import make_incident


def test_a_held_channel_gives_its_time_and_the_answer_that_asked_for_it_until_the_wait_is_over(
    db: Session,
) -> None:
    channels(db, "a", "never-used")
    outbox.owe(db_session=db, incident=make_incident(db), event="incident_acknowledged")
    now = utcnow()
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60, now=now)
    outbox.fail(
        db_session=db,
        claim=claim,
        error="429 from Slack (ratelimited)",
        retry=True,
        retry_after_s=120,
        retry_for_s=1800,
        now=now,
    )
    [hold] = channel_holds(db_session=db, now=now).values()
    assert (hold.channel, hold.until) == ("a", now + timedelta(seconds=120))
    assert (hold.reason, hold.reason_at) == ("429 from Slack (ratelimited)", now)
    assert channel_holds(db_session=db, now=now + timedelta(seconds=121)) == {}


def test_the_answer_stays_the_reason_after_notify_retry_queues_its_message_again(db: Session) -> None:
    """`notify retry` does not lift a hold (the receiver asked for it), so its reason stays too."""
    channels(db, "a")
    outbox.owe(db_session=db, incident=make_incident(db), event="incident_acknowledged")
    now = utcnow()
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60, now=now)
    outbox.fail(
        db_session=db, claim=claim, error="429 from x", retry=False, retry_after_s=60, retry_for_s=0, now=now
    )
    assert outbox.retry(db_session=db, now=now) == 1
    assert channel_holds(db_session=db, now=now)["a"].reason == "429 from x"
