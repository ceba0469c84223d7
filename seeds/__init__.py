"""Demo data: the Meridian Commerce incidents, runbooks and services (YAML, read as package data)."""
