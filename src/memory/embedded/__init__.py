"""The default memory driver: one SQLite file, hybrid BM25 and vector recall, no server.

May import the rest of ``memory``; nothing above it.
"""
