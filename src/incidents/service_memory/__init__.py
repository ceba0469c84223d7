"""Which memory the service uses, as ``recallops serve`` recorded it, for admin commands to compare with.

May import the rest of ``incidents``; nothing above it.
"""
