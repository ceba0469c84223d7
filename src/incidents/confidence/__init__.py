"""The team's confidence fits: every refit of a bank, versioned, and which one is in use.

May import the rest of ``incidents``; nothing above it.
"""
