"""The one leased queue: claim, lease, heartbeat, fencing, attempts and backoff for every table of owed work.

Briefing and other job rows (``incidents.briefings``), the memory outbox (``incidents.resolution.outbox``)
and the delivery outbox (``incidents.delivery.outbox``) are each a ``Queue`` over their own table; the
worker (``web.app.lanes``) runs each in a lane of its own. Imports nothing from ``agent`` or ``web``.
"""
