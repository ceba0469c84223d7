"""Evaluation of RecallOps itself: scenario runs, deterministic scoring, faithfulness checks.

May import the product; the scenarios are package data (``cases/``), read with ``importlib.resources``.
"""
