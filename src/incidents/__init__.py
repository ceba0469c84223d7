"""Alerts, incidents and their lifecycle, the ingestion adapters and persistence.

May import only itself and third-party libraries; never ``memory``'s drivers, ``agent``, ``web`` or
``evals``.
"""
