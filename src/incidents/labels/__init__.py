"""Relevance labels: per bank, what each resolved incident says about the precedents its briefings showed.

May import the rest of ``incidents``; nothing above it.
"""
