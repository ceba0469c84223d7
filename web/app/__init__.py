"""The running service without its HTTP face: container, settings, worker and one module per flow.

May import ``incidents``, ``memory`` (through ``memory.service`` and the driver factory), ``agent``.
Never imports ``web.http`` or ``web.cli``.
"""
