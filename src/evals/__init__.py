"""Evals and benchmarks: the scenario suite and ``recallops bench``.

Depends on the product (``web``, ``agent``, ``memory``, ``incidents``); nothing in the product imports it.
"""
