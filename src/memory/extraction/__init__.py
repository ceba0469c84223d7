"""Free-form post-mortems into the labeled template: reading files and exports into source documents,
and extracting each template field with the source span it came from.

May import the rest of ``memory`` and third-party libraries; never ``incidents``, ``agent``, ``web`` or
``evals``.
"""
