"""Briefing grades: one row per graded briefing version, and the figures over a window.

May import the rest of ``incidents``; nothing above it.
"""
