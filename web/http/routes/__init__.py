"""FastAPI routers: the JSON API under ``/api/v1``, health and metrics, and the pages."""
