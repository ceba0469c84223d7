"""The HTTP face: the FastAPI app, JSON routes, pages, views, templates, static files and sessions.

May import ``web.app``, ``incidents`` and ``agent``; reaches memory only through ``memory.service``,
never a memory driver.
"""
