"""The default memory driver: one SQLite file, hybrid BM25 and vector recall, no server."""
