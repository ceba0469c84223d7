"""The briefing job: an alert in, a cited briefing out, through the three-hop loop.

The loop, the evidence-only planner, the assembled answer, its short head, what the precedents say
together, and the two readers built on the same recall (replay, the action check). May import
``agent.core``, ``memory`` and ``incidents``.
"""
