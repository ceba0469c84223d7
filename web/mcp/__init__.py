"""RecallOps over the Model Context Protocol: read-only tools for other agents, stdio and HTTP.

May import ``web.app``, ``web.http`` (the API's route functions and bearer-token checks it shares),
``incidents``, ``agent`` and ``memory.service``; never a memory driver.
"""
