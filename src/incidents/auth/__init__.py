"""Who may call: sender tokens with scopes and engineer accounts, stored hashed.

May import the rest of ``incidents``; nothing above it.
"""
