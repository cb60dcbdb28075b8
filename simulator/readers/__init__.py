"""Readers of job traces into simulator workloads."""
