"""Deliveries: what the team's chat channels are owed about incidents, queued with the event itself.

May import only ``incidents`` and third-party libraries; the senders and their secrets live in
``web.app.notify``.
"""
