"""Deliveries: what the team's chat channels are owed about incidents, queued with the event itself."""
