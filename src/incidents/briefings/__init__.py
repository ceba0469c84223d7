"""Stored briefings (versioned per incident) and the leased briefing jobs the worker runs.

May import the rest of ``incidents``; nothing above it.
"""
