"""Incidents: grouping alerts into one, the timeline, acknowledge and the open/resolved lifecycle.

May import the rest of ``incidents``; nothing above it.
"""
