"""Multi-step work with side effects across the incident store and memory."""
