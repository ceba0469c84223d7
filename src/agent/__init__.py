"""The agent: the model clients and the jobs they drive, one sub-package per job.

- ``core``: the conversation, numbered evidence, tools, prompts and citation checks all jobs share;
- ``briefing``: an alert in, a cited briefing out (the three-hop loop);
- ``resolution``: notes in, a post-mortem draft out, and the briefing graded;
- ``profile``: the team profile written by the model.

``llm``, ``endpoint`` and ``settings`` (the choice between a model and the evidence-only modes, the
Groq or OpenAI-compatible client, their settings) sit at the top. Sub-packages import ``core`` and
the jobs they build on, never back. May import ``memory`` (the bank's values, the role protocols,
``memory.service``) and ``incidents`` (value types and time helpers); never ``web`` or ``evals``.
"""
