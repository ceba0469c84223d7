"""Benchmarks behind ``recallops bench``: each module measures one thing and returns plain data.

May import the product and ``evals.scenarios``.
"""
