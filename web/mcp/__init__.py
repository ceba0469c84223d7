"""RecallOps over the Model Context Protocol: read-only tools for other agents, stdio and HTTP."""
