"""Helpers for tests that start real services: free loopback ports, condition waits, processes."""
