"""The service shell: the only place that wires incidents, memory and agent together."""
