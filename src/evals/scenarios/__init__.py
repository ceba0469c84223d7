"""Evaluation of RecallOps itself: scenario runs, deterministic scoring, faithfulness checks.

May import the product; the scenarios are package data (``cases/``), read with ``importlib.resources``.
"""

from importlib import resources
from pathlib import Path

DEFAULT_SCENARIOS = Path(str(resources.files("evals.scenarios") / "cases"))  # package data
# How help and the command reference name that default: its path differs with every installation.
SHIPPED_SCENARIOS = "the scenarios shipped with RecallOps"
