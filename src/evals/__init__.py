"""Evals and benchmarks: the scenario suite and ``recallops bench``.

May import the product (``web``, ``agent``, ``memory``, ``incidents``); nothing in the product imports
it.
"""
