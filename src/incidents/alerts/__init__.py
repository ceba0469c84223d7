"""Alert intake: the source payload schemas, their adapters to one normalized alert, storage and routing.

May import the rest of ``incidents``; nothing above it.
"""
