"""The machinery every agent job shares: the conversation, numbered evidence, tools, prompts and checks.

A briefing and a resolution conversation both run on these parts. May import ``memory`` (values,
role protocols, ``memory.service``) and ``incidents`` (value types); never another ``agent``
sub-package, ``web`` or ``evals``.
"""
