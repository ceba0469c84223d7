"""The team profile's bookkeeping in the database: refresh requests and their state.

May import the rest of ``incidents``; nothing above it.
"""
