"""FastAPI routers: the JSON API under ``/api/v1``, health and metrics, and the pages.

May import ``web.app``, ``web.http``'s helpers, ``incidents``, ``agent`` and ``memory.service``; never a
memory driver.
"""
