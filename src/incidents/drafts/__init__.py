"""Drafts: post-mortems extracted from a team's own files, waiting for a person to accept or reject them.

May import the rest of ``incidents`` and ``memory`` (the template, the import rows); nothing above it.
"""
