"""Delivery to chat: channel configuration, the one rendering of a notice, senders, the outbox worker."""
