"""Observing: Prometheus metrics over the latest cycle, and the HTTP endpoints
that serve them.
"""
