"""Relevance labels: per bank, what each resolved incident says about the precedents its briefings cited.

May import the rest of ``incidents``; nothing above it.
"""
