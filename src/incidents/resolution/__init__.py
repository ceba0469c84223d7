"""Resolutions: the post-mortem stored with the incident, and the outbox that carries it to memory.

May import the rest of ``incidents``; nothing above it.
"""
