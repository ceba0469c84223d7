"""Alerts, incidents and their lifecycle, the ingestion adapters and persistence.

May import only itself, ``memory.schema`` (the labeled template: the resolution kinds a post-mortem
may record) and third-party libraries; never ``memory``'s drivers, ``agent``, ``web`` or ``evals``.
"""
