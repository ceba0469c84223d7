"""Evaluation of RecallOps itself: scenario runs, deterministic scoring, faithfulness checks."""
