"""Delivery to chat: channel configuration, the one rendering of a notice, senders, the outbox worker.

May import ``incidents`` (the delivery outbox and routing), ``web.app`` and third-party senders
(``slack_sdk``, Apprise, httpx); never ``web.http`` or ``web.cli``.
"""
