"""The resolution job: an engineer's notes in, a cited post-mortem draft out, and the briefing graded.

It reuses the briefing's loop with ``log_incident`` on offer. May import ``agent.core``,
``agent.briefing``, ``memory`` and ``incidents``.
"""
