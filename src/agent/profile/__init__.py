"""The profile job: the team's reliability profile written by the configured model.

May import ``agent.core``, the model clients (``agent.llm``, ``agent.endpoint``), ``memory`` and
``incidents``.
"""
