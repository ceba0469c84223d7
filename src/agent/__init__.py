"""The LLM clients, the three-hop tool loop, prompts, briefings and citation checks."""
