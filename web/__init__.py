"""The service shell: the only place that wires incidents, memory and agent together.

``web.app`` runs the service, ``web.http`` is its HTTP face and ``web.cli`` its command line. ``web``
may import ``incidents``, ``memory`` and ``agent``, never ``evals``.
"""
