"""The agent: the LLM clients, the three-hop tool loop, prompts, briefings and citation checks.

May import ``memory`` (the bank's values, the role protocols, ``memory.service``) and ``incidents``
(value types and time helpers); never ``web`` or ``evals``.
"""
