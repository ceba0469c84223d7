"""Alerts, incidents and their lifecycle, the ingestion adapters and persistence."""
